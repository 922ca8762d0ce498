"""The report view's resource and wiring: one self-contained file within budget, `_meta.ui` only for Apps clients."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client, MCPError
from mcp.client.extension import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from pytest_mcp.adapters.mcp.report_view import VIEW_BUDGET_BYTES, VIEW_URI, view_html
from pytest_mcp.adapters.mcp.tools import TOOLS as TOOL_CLASSES
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings
from tests.answers import TOOLS

pytestmark = pytest.mark.anyio

APPS = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})


# The handshake era (2025-11-25) and the sessionless one (2026-07-28), where capabilities ride each request.
MODES = ("legacy", "auto")


@pytest.fixture(params=MODES)
async def apps_client(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    async with _client(tmp_path, [APPS], request.param) as client:
        yield client


def _client(root: Path, extensions: list[Any], mode: Literal["legacy", "auto"]) -> Client:
    server = create_container(Settings(root=root, runner="fake")).tool_server().server
    return Client(server, mode=mode, extensions=extensions)


def test_the_view_is_one_file_within_its_budget() -> None:
    size = len(view_html().encode())
    print(f"report view: {size:,} bytes of {VIEW_BUDGET_BYTES:,}")
    assert size <= VIEW_BUDGET_BYTES


def test_the_view_fetches_nothing_and_runs_only_its_own_script_and_style() -> None:
    html = view_html()
    for reference in ("src=", "href=", "url(", "@import", "fetch(", "XMLHttpRequest", "WebSocket", "http:", "https:"):
        assert reference not in html, f"the view refers to something outside itself: {reference}"
    assert ".innerHTML" not in html
    assert "insertAdjacentHTML" not in html
    (policy,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    for tag, directive in (("script", "script-src"), ("style", "style-src")):
        (body,) = re.findall(rf"<{tag}>(.*?)</{tag}>", html, flags=re.DOTALL)
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert directives[directive] == f"'sha256-{digest}'"
    assert {name: directives[name] for name in ("default-src", "connect-src", "img-src", "frame-src")} == dict.fromkeys(
        ("default-src", "connect-src", "img-src", "frame-src"), "'none'"
    )


async def test_a_client_with_apps_sees_the_report_tools_point_at_the_view(apps_client: Client) -> None:
    tools = {tool.name: tool for tool in (await apps_client.list_tools()).tools}
    assert set(tools) == TOOLS
    viewed = {tool.name for tool in TOOL_CLASSES if tool.viewed}
    assert viewed  # the view shows some tools' answers, and no other tool is marked
    for name in viewed:
        assert (tools[name].meta or {})["ui"] == {"resourceUri": VIEW_URI}
        assert (tools[name].meta or {})["ui/resourceUri"] == VIEW_URI
    assert [name for name in tools if name not in viewed and tools[name].meta is not None] == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_apps_sees_no_ui_meta(tmp_path: Path, mode: Literal["legacy", "auto"]) -> None:
    async with _client(tmp_path, [], mode) as client:
        tools = (await client.list_tools()).tools
    assert [tool.meta for tool in tools] == [None] * len(TOOLS)


async def test_the_server_advertises_the_extension_and_serves_the_view_with_every_origin_blocked(
    apps_client: Client, tmp_path: Path
) -> None:
    # Advertised as the SDK does; its 2025-11-25 wire has no `extensions`, so only 2026-07-28 clients see it.
    server = create_container(Settings(root=tmp_path, runner="fake")).tool_server().server
    assert server.get_capabilities().extensions == {EXTENSION_ID: {}}
    if apps_client.protocol_version == "2026-07-28":
        assert apps_client.server_capabilities.extensions == {EXTENSION_ID: {}}
    (listed,) = (await apps_client.list_resources()).resources
    assert (str(listed.uri), listed.mime_type) == (VIEW_URI, APP_MIME_TYPE)
    blocked = {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}
    assert (listed.meta or {})["ui"]["csp"] == blocked
    (contents,) = (await apps_client.read_resource(VIEW_URI)).contents
    assert contents.mime_type == APP_MIME_TYPE
    assert getattr(contents, "text") == view_html()  # noqa: B009 - a TextResourceContents
    assert (contents.meta or {})["ui"]["csp"] == blocked


async def test_reading_another_resource_is_an_error_naming_the_uri(apps_client: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await apps_client.read_resource("ui://pytest-mcp/other.html")
    assert raised.value.error.message.startswith("uri: unknown resource 'ui://pytest-mcp/other.html'")
