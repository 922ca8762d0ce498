"""Progress as MCP `notifications/progress`, on the request that asked for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp_types import INVALID_PARAMS, ProgressNotification, ProgressNotificationParams, RequestId

from pytest_mcp.ports.progress import ProgressSink

if TYPE_CHECKING:
    from pytest_mcp.domain.models import ReportedTest


class McpProgress(ProgressSink):
    """Progress as `notifications/progress` on the calling request, e.g. "120/300 - 2 failed"."""

    def __init__(self, session: ServerSession, token: str | int, request_id: RequestId | None) -> None:
        self._session = session
        self._token = token
        self._request_id = request_id

    async def reported(self, test: ReportedTest) -> None:
        pass  # the notification carries counts only; the reports come with the answer

    async def update(self, done: int, total: int, failed: int) -> None:
        # Scoped to the calling request, so on streamable HTTP it rides that request's stream.
        await self._session.send_notification(
            ProgressNotification(
                params=ProgressNotificationParams(
                    progress_token=self._token,
                    progress=done,
                    total=total,
                    message=f"{done}/{total} \u2014 {failed} failed",
                )
            ),
            related_request_id=self._request_id,
        )


def progress_for(ctx: ServerRequestContext[Any]) -> McpProgress | None:
    """The request's progress sink, or None when it asked for no progress.

    The token is read as the client sent it: the SDK's model would have turned `true` into 1.
    """
    raw_meta = (ctx.params or {}).get("_meta")
    token = raw_meta.get("progressToken") if isinstance(raw_meta, Mapping) else None
    if token is None:
        return None
    if isinstance(token, bool) or not isinstance(token, str | int):
        raise MCPError(
            code=INVALID_PARAMS,
            message="_meta.progressToken: must be a string or an integer",
            data={"errors": [{"field": "_meta.progressToken", "reason": "must be a string or an integer"}]},
        )
    return McpProgress(ctx.session, token, ctx.request_id)
