"""The tools an agent can call: the `Tool` protocol, its registry, and the built-in tools.

Built in: `shell` (bash in the project directory), `read_file`, `write_file`,
`edit_file`, `list_files`, `grep`, and `web_fetch`, offered only where the agent file's
`tools:` lists it. MCP tools implement the same `Tool` protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hookgate.tools.base import Tool, ToolContext, ToolRegistry, ToolResult

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "DEFAULT_TOOL_NAMES",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "builtin_tools",
]


def __getattr__(name: str) -> Any:
    # Reading an agent file needs the tool names alone, not what a tool is made of.
    if name in ("Tool", "ToolContext", "ToolRegistry", "ToolResult"):
        from hookgate.tools import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def builtin_tools() -> list[Tool]:
    """A fresh instance of every built-in tool, in the order they are offered to the model."""
    # Imported here: the tools import asyncio, regex and the http client, which reading
    # an agent file (`hooks fire`, `hooks check`) does not need.
    from hookgate.tools.files import EditFileTool, ReadFileTool, WriteFileTool
    from hookgate.tools.search import GrepTool, ListFilesTool
    from hookgate.tools.shell import ShellTool
    from hookgate.tools.webfetch import WebFetchTool

    return [
        ShellTool(),
        ReadFileTool(),
        WriteFileTool(),
        EditFileTool(),
        ListFilesTool(),
        GrepTool(),
        WebFetchTool(),
    ]


#: The names of the built-in tools, as the agent file's `tools:` list spells them, in
#: `builtin_tools` order (tests/tools/test_files.py holds the two together).
BUILTIN_TOOL_NAMES: tuple[str, ...] = (
    "shell", "read_file", "write_file", "edit_file", "list_files", "grep", "web_fetch",
)  # fmt: skip
#: The tools offered when the agent file has no `tools:`: all but those that reach the web.
DEFAULT_TOOL_NAMES: tuple[str, ...] = tuple(n for n in BUILTIN_TOOL_NAMES if n != "web_fetch")
