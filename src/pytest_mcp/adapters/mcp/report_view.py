"""The report view (MCP Apps, ADR 0015): the `ui://` resource, and `_meta.ui` for clients that render it."""

from __future__ import annotations

import base64
import hashlib
import re
from importlib import resources
from typing import Any

from mcp import MCPError
from mcp.server.apps import EXTENSION_ID, Apps, ResourceCsp, client_supports_apps
from mcp.server.context import ServerRequestContext
from mcp_types import (
    INVALID_PARAMS,
    ListResourcesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    TextResourceContents,
)

VIEW_URI = "ui://pytest-mcp/report.html"
VIEW_FILE = "report_view.html"
VIEW_BUDGET_BYTES = 150_000
"""The view as served, at most (ADR 0015): one file, nothing fetched."""

# ext-apps' own server helper writes the older flat key beside `ui` for hosts that read only that.
_LEGACY_URI_KEY = "ui/resourceUri"


def view_html() -> str:
    """The view as served: the shipped file, its CSP allowing only its own script and style (by hash)."""
    html = resources.files(__package__).joinpath(VIEW_FILE).read_text(encoding="utf-8")
    for tag, placeholder in (("script", "SCRIPT_HASH"), ("style", "STYLE_HASH")):
        bodies = re.findall(rf"<{tag}>(.*?)</{tag}>", html, flags=re.DOTALL)
        if len(bodies) != 1:  # pragma: no cover - a shape the view's own tests pin
            raise AssertionError(f"{VIEW_FILE} must hold exactly one <{tag}>, has {len(bodies)}")
        digest = base64.b64encode(hashlib.sha256(bodies[0].encode()).digest()).decode()
        html = html.replace(placeholder, f"'sha256-{digest}'", 1)
    return html


class ReportView:
    """Serves the view through the SDK's Apps extension, and marks the report tools for clients that negotiated it.

    Clients that did not negotiate MCP Apps get the tool listing unchanged (the same object).
    """

    def __init__(self) -> None:
        self.apps = Apps()
        # No origin at all: the view fetches nothing, loads nothing, frames nothing.
        blocked = ResourceCsp(connect_domains=[], resource_domains=[], frame_domains=[], base_uri_domains=[])
        self.apps.add_html_resource(
            VIEW_URI,
            view_html(),
            name="pytest-report",
            title="pytest report",
            description="A test run at a glance: counts, failure groups with their diffs, skips, slowest tests.",
            csp=blocked,
            prefers_border=True,
        )
        (binding,) = self.apps.resources()
        self._resource = binding.resource

    @property
    def identifier(self) -> str:
        return EXTENSION_ID

    def settings(self) -> dict[str, Any]:
        return self.apps.settings()

    def tools_for(
        self, ctx: ServerRequestContext[Any], listing: ListToolsResult, viewed: frozenset[str]
    ) -> ListToolsResult:
        """`listing` as this client gets it: with `_meta.ui` on the `viewed` tools (those whose answers the
        view shows) when it renders MCP Apps."""
        if not client_supports_apps(ctx):
            return listing
        ui = {"resourceUri": VIEW_URI}
        return ListToolsResult(
            tools=[
                tool.model_copy(update={"meta": {"ui": ui, _LEGACY_URI_KEY: VIEW_URI}}) if tool.name in viewed else tool
                for tool in listing.tools
            ]
        )

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        resource = self._resource
        return ListResourcesResult(
            resources=[
                Resource(
                    uri=resource.uri,
                    name=resource.name or "",
                    title=resource.title,
                    description=resource.description,
                    mime_type=resource.mime_type,
                    _meta=resource.meta,
                )
            ]
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        if str(params.uri) != self._resource.uri:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"uri: unknown resource {str(params.uri)[:200]!r}; this server has only {VIEW_URI}",
                data={"errors": [{"field": "uri", "reason": "unknown resource"}]},
            )
        text = await self._resource.read()
        assert isinstance(text, str)  # a TextResource
        return ReadResourceResult(
            contents=[
                TextResourceContents(
                    uri=self._resource.uri, text=text, mime_type=self._resource.mime_type, _meta=self._resource.meta
                )
            ]
        )
