"""pytest-mcp's part of a sandboxed run, loaded into the target pytest with `-p _pytest_mcp_sandbox`.

Its one job: a failure the sandbox caused says so. The reporter passes what it finds on with the
failure (`blocked`), and the answer names it in the failure's group, with the option that allows
it. Loaded by sandboxed runs only (`--sandbox`), in pytest-xdist's workers too, where the report
is made; the attribute crosses to the controller with the report.

PYTEST_DONT_REWRITE. Standard library only; Python 3.9 and later.
"""

import errno
import os
import socket
import sys

import _pytest_mcp_protocol as protocol
import pytest

_NETWORK_ERRNOS = (errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH)


class SandboxCauses:
    """Under pytest-mcp's --sandbox: which failures the sandbox caused, named on their reports.

    An exception in a failure's chain says the cause: a refused or unreachable connection or a
    DNS failure (with the network namespace's loopback only), a write to a read-only place, a
    read of the emptied home. The address comes from Python's audit events (`socket.connect`,
    `socket.getaddrinfo`), noted as they happen and cleared as each test starts: the exception
    does not carry it. Registered only for a sandboxed run, in pytest-xdist's workers too.
    """

    def __init__(self, config, network, tmp_mib):
        self.isolated = network == "loopback"
        self.root = str(config.rootpath)
        self.writable = (self.root, "/tmp")  # noqa: S108 - the sandbox's private /tmp
        self.tmp_mib = tmp_mib
        self.home = os.path.expanduser("~")
        self.connect = None
        self.lookup = None
        sys.addaudithook(self._audit_hook())

    def _audit_hook(self):
        """The audit hook: a plain function, which every audit event of the run calls.

        Not a bound method: at each event CPython looks `__cantrace__` up on each hook, and on a
        bound method that lookup raises an AttributeError, formats its message and clears it. A
        pytest run raises about 20 events a test (`object.__getattr__`, `builtins.id`,
        `os.putenv`): 6,150 instructions an event with a method, 2,530 with a function (cachegrind,
        CPython 3.11); a clean 2,000-test run's whole cost of --sandbox was mostly that.
        """

        def audit(event, args):
            if event == "socket.connect":
                self.connect = args[1]
            elif event == "socket.getaddrinfo":
                self.lookup = args[:2]

        return audit

    def pytest_runtest_logstart(self, nodeid, location):
        self.connect = self.lookup = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        if call.excinfo is not None:
            blocked = self.cause(call.excinfo.value)
            if blocked:
                setattr(outcome.get_result(), protocol.BLOCKED_ATTRIBUTE, blocked)

    def cause(self, error):
        seen = set()
        while error is not None and id(error) not in seen:
            seen.add(id(error))
            found = self._one(error)
            if found:
                return found
            error = error.__cause__ or error.__context__
        return None

    def _one(self, error):
        allow = "%s allows it" % protocol.SANDBOX_NETWORK_FLAG
        if isinstance(error, socket.gaierror) and self.isolated:
            host = self.lookup[0] if self.lookup else None
            return "DNS lookup %s; %s" % (_text(host) if host else "(a name)", allow)
        if not isinstance(error, OSError):
            return None
        if error.errno in _NETWORK_ERRNOS and self.isolated:
            where = _address(self.connect) if self.connect is not None else "(an address)"
            return "connect %s; %s" % (where, allow)
        path = error.filename if isinstance(error.filename, str) else None
        if error.errno == errno.ENOSPC and (path is None or _under(path, ("/tmp",))) and _full("/tmp"):  # noqa: S108
            return "write /tmp; the sandbox's /tmp is full (%s MiB, %s)" % (self.tmp_mib, protocol.SANDBOX_TMP_FLAG)
        if path is None:
            return None
        if error.errno == errno.EROFS and _under(path, (self.root,)):
            return "write %s; the project's .git and virtualenv are read-only (%s PATH allows it)" % (
                path,
                protocol.SANDBOX_WRITABLE_FLAG,
            )
        if error.errno == errno.EROFS or (
            error.errno in (errno.EACCES, errno.EPERM) and not _under(path, self.writable)
        ):
            return "write %s; only the project root and /tmp are writable" % path
        if error.errno == errno.ENOENT and _under(path, (self.home,)):
            return "read %s; $HOME is empty in the sandbox" % path
        return None


def _under(path, directories):
    path = os.path.abspath(path)
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


def _full(directory):
    """Whether the file system of `directory` has no room left (a write there just got ENOSPC)."""
    try:
        found = os.statvfs(directory)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < 64 * 1024


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _address(address):
    if isinstance(address, tuple) and len(address) >= 2:
        host = _text(address[0])
        return ("[%s]:%s" if ":" in host else "%s:%s") % (host, address[1])
    return _text(address)


def pytest_addoption(parser):
    group = parser.getgroup("pytest-mcp", "pytest-mcp reporter (internal)")
    group.addoption(protocol.OPTION_SANDBOX, default=None, choices=("loopback", "host"), help="(internal)")
    group.addoption(protocol.OPTION_SANDBOX_TMP, default=None, help="(internal)")


def pytest_configure(config):
    network = config.getoption(protocol.OPTION_SANDBOX)
    if network and config.pluginmanager.get_plugin("pytest-mcp-sandbox") is None:
        tmp_mib = config.getoption(protocol.OPTION_SANDBOX_TMP)
        config.pluginmanager.register(SandboxCauses(config, network, tmp_mib), "pytest-mcp-sandbox")
