"""The tools an agent can call: the `Tool` protocol, its registry, and the built-in tools.

Built in: `shell` (bash in the project directory), `read_file`, `write_file`,
`edit_file`, `list_files`, `grep`, and `web_fetch`, offered only where the agent file's
`tools:` lists it. MCP tools implement the same `Tool` protocol.
"""

from __future__ import annotations

from hookgate.tools.base import Tool, ToolContext, ToolRegistry, ToolResult
from hookgate.tools.files import EditFileTool, ReadFileTool, WriteFileTool
from hookgate.tools.search import GrepTool, ListFilesTool
from hookgate.tools.shell import ShellTool
from hookgate.tools.webfetch import WebFetchTool

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "DEFAULT_TOOL_NAMES",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "builtin_tools",
]


def builtin_tools() -> list[Tool]:
    """A fresh instance of every built-in tool, in the order they are offered to the model."""
    return [
        ShellTool(),
        ReadFileTool(),
        WriteFileTool(),
        EditFileTool(),
        ListFilesTool(),
        GrepTool(),
        WebFetchTool(),
    ]


#: The names of the built-in tools, as the agent file's `tools:` list spells them.
BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(tool.spec.name for tool in builtin_tools())
#: The tools offered when the agent file has no `tools:`: all but those that reach the web.
DEFAULT_TOOL_NAMES: tuple[str, ...] = tuple(n for n in BUILTIN_TOOL_NAMES if n != "web_fetch")
