"""MCP servers as tool sources: config, connections, and their tools as `Tool`s.

`mcp_servers:` in the agent file names the servers (`config.parse_mcp_servers`);
`servers.start_mcp_servers` starts them with the session and returns their tools,
named `mcp__<server>__<tool>`, which pass `toolcall.call_tool` like every other tool.
Only `config` is imported here: the SDK takes most of a second to import, and an agent
without MCP servers should not pay for it.
"""

from hookgate.mcp.config import (
    DEFAULT_TIMEOUT,
    HttpServer,
    McpServerConfig,
    StdioServer,
    parse_mcp_servers,
)

__all__ = ["DEFAULT_TIMEOUT", "HttpServer", "McpServerConfig", "StdioServer", "parse_mcp_servers"]
