"""pytest-mcp's bootstrap: run by the *target* interpreter as `python -c <this file> DIR LIMITS PLUGINS ARGS...`.

DIR is the run's private directory. `-c`, not the file's path: frames of this code then read
`<string>`, and no answer shows the private directory (faulthandler dumps every frame).

It starts pytest exactly as `python -m pytest ARGS...` would (the working directory first on
sys.path), after: taking the nice value LIMITS gives (`NICE=n`), so that the warden and all
it forks have it; forking pytest under a warden that stops whatever the run leaves behind;
registering faulthandler for the dump signal; applying the rlimits LIMITS gives
(`RLIMIT_AS=soft:hard,...`); putting this run's private directory at the *end* of sys.path;
checking that pytest and each of PLUGINS (`module=distribution,...`) can be imported; and
importing our own plugins, the path guard and the reporter (`protocol.OWN_PLUGINS`). The user's
environment variables are not touched, so nothing leaks into the processes the tests spawn.

Our plugins are imported here, plainly, before pytest starts: pytest would import a module that
`-p` names through its assertion rewriter, which parses it into AST objects first, and the
garbage collections those cause cost about 35 ms of a small run (ADR 0001). Their docstrings say
PYTEST_DONT_REWRITE, so pytest takes the imported modules as they are. The directory stays on
sys.path for pytest-xdist's workers, which import them by name.

Standard library only; Python 3.9 and later.
"""

import sys

# `-c` puts the working directory first on sys.path; keep it out of the way while the standard
# library is imported, so that a project's `runpy.py` cannot stand in for it. It goes back below.
_CWD_FIRST = bool(sys.path) and sys.path[0] == ""
if _CWD_FIRST:
    del sys.path[0]

import faulthandler  # noqa: E402
import importlib.util  # noqa: E402
import os  # noqa: E402
import runpy  # noqa: E402
import signal  # noqa: E402

private_dir, limits, plugins = sys.argv[1:4]
del sys.argv[1:4]
limits = dict(limit.split("=") for limit in filter(None, limits.split(",")))
if "NICE" in limits:
    os.nice(int(limits.pop("NICE")))


def _load(name):
    """A module of this run's private directory, by its file: sys.path could hold another of the name."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(private_dir, name + ".py"))
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


protocol = _load("_pytest_mcp_protocol")
# From here on this process is the run's warden, and pytest runs in a child under it: nothing the
# tests start outlives the run, even outside its process group (_pytest_mcp_warden.py).
_load("_pytest_mcp_warden").guard(
    os.path.join(private_dir, protocol.WARDEN_REPORT), forward=(getattr(signal, protocol.DUMP_SIGNAL),)
)

# faulthandler writes to a duplicate of stderr: pytest captures fd 2 while a test runs. The runner
# sends the signal when a run overruns its timeout, just before it kills the run, so that the
# error can say which test it was stuck in.
faulthandler.register(getattr(signal, protocol.DUMP_SIGNAL), file=os.fdopen(os.dup(2), "w"), all_threads=True)

if limits:
    import resource

    for name, values in limits.items():
        soft, hard = values.split(":")
        resource.setrlimit(getattr(resource, name), (int(soft), int(hard)))

# As `python -m pytest` has it: the working directory first; this run's directory last.
if _CWD_FIRST:
    sys.path.insert(0, os.getcwd())
sys.path.append(private_dir)

try:
    import pytest  # noqa: F401 - only whether it can be imported
except ImportError as error:
    sys.stderr.write("%s %s\n" % (protocol.PYTEST_MISSING_MARK, error))
    sys.exit(protocol.PYTEST_MISSING_EXIT)
for plugin in filter(None, plugins.split(",")):
    module, distribution = plugin.split("=")
    if importlib.util.find_spec(module) is None:
        sys.stderr.write("%s %s\n" % (protocol.PLUGIN_MISSING_MARK, distribution))
        sys.exit(protocol.PLUGIN_MISSING_EXIT)

for name in protocol.OWN_PLUGINS:
    _load(name)
runpy.run_module("pytest", run_name="__main__", alter_sys=True)
