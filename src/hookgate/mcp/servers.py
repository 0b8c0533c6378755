"""Start the MCP servers of a session, all at once, and hand back their tools.

A server that fails to start (command not found, an error, no answer within its
`timeout`) is a notice, and its tools are absent: one broken server must not lock the
user out of their agent, and a tool that is absent cannot be called unguarded.
Every server started is closed with the session's `resources`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path

from hookgate.hooks.loop import needs_loop
from hookgate.mcp.config import McpServerConfig
from hookgate.mcp.connection import McpConnection, describe_error, show_sdk_logs_as_notices
from hookgate.mcp.tools import McpTool, mcp_tools

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookgate.tools.sandbox.boundaries import Boundaries


async def start_mcp_servers(
    servers: Mapping[str, McpServerConfig],
    resources: AsyncExitStack,
    notify: Callable[[str], None],
    *,
    project_dir: Path,
    confine: Callable[[list[str]], list[str]] | None = None,
    boundaries: Boundaries | None = None,
) -> list[McpTool]:
    """Start every server in `servers`; their tools, in the order the servers are listed.

    `confine`: how a server with `sandbox: true` is run in the session's sandbox, within
    `boundaries`.
    """
    await needs_loop()  # each connection is held by a task of its own
    show_sdk_logs_as_notices()
    connections = [
        McpConnection(config, project_dir=str(project_dir), confine=confine, boundaries=boundaries)
        for config in servers.values()
    ]
    for connection in connections:
        resources.push_async_callback(connection.aclose)
    async with asyncio.TaskGroup() as group:
        started = [group.create_task(_start(connection, notify)) for connection in connections]
    return [tool for task in started for tool in task.result()]


async def _start(connection: McpConnection, notify: Callable[[str], None]) -> list[McpTool]:
    try:
        remote = await connection.start()
    except Exception as exc:
        notify(
            f"MCP server {connection.name!r} did not start: {describe_error(exc)}; "
            "its tools are not available"
        )
        return []
    tools, skipped = mcp_tools(connection, remote)
    for notice in skipped:
        notify(notice)
    return tools
