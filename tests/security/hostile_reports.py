"""A project whose test reports carry markup: the hostile corpus for anything that renders an answer.

Each payload, if a renderer ever treated it as HTML (or followed it as a link), would run HOOK:
post a `pwned` message to the page's host and set `window.__pwned`. The payloads sit where a test
report carries text of the project's choosing: node ids (parameter ids), assertion messages,
captured stdout and stderr, skip reasons, a collection error's message, and, where culprits are
named, a culprit's file (HELPER, a module loaded by path) and its symptoms' messages.
"""

from __future__ import annotations

from pathlib import Path

HOOK = "parent.postMessage({jsonrpc:'2.0',method:'pwned'},'*');window.__pwned=1"
PAYLOADS = {
    "script": f"<script>{HOOK}</script>",
    "img-onerror": f'<img src=x onerror="{HOOK}">',
    "javascript-url": f"javascript:{HOOK}",
    "style-close": f"</style><script>{HOOK}</script><style>",
}

HELPER = f"{PAYLOADS['img-onerror']}.py"
"""A module whose file name is a payload, with one wrong value: the culprit of eight symptoms."""

TESTS = f"""
import importlib.util
import pathlib
import sys

import pytest

PAYLOADS = {list(PAYLOADS.values())!r}
_SPEC = importlib.util.spec_from_file_location("hostile_price", pathlib.Path(__file__).with_name({HELPER!r}))
hostile_price = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(hostile_price)


@pytest.mark.parametrize("payload", PAYLOADS, ids=list("abcd"))
def test_price_here(payload):
    assert hostile_price.price() == 1, payload


@pytest.mark.parametrize("payload", PAYLOADS, ids=list("abcd"))
def test_price_there(payload):
    assert hostile_price.price() == 1, payload


@pytest.mark.parametrize("payload", PAYLOADS, ids=PAYLOADS)
def test_message(payload):
    print("stdout " + payload)
    sys.stderr.write("stderr " + payload + "\\n")
    assert payload == "", payload


@pytest.mark.parametrize("payload", PAYLOADS, ids=PAYLOADS)
def test_skip(payload):
    pytest.skip(payload)


@pytest.fixture
def broken(request):
    raise RuntimeError(request.node.callspec.id)


@pytest.mark.parametrize("payload", PAYLOADS, ids=PAYLOADS)
def test_error_in_setup(payload, broken):
    pass
"""

BROKEN = f"raise ImportError({' '.join(PAYLOADS.values())!r})\n"


def write_hostile_project(root: Path, *, collection_error: bool = False) -> Path:
    """Write the project under `root`; with `collection_error`, a module that fails to import with every payload."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_hostile.py").write_text(TESTS)
    (root / HELPER).write_text("def price():\n    return 2\n")
    if collection_error:
        (root / "test_hostile_import.py").write_text(BROKEN)
    return root
