"""The tools an agent can call: the `Tool` protocol, its registry, and the built-in tools.

Built in: `shell` (bash in the project directory), `read_file`, `write_file`,
`edit_file`, `list_files` and `grep`. MCP tools implement the same `Tool` protocol.
"""

from __future__ import annotations

from hookgate.tools.base import Tool, ToolContext, ToolRegistry, ToolResult

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "builtin_tools",
]


def builtin_tools() -> list[Tool]:
    """A fresh instance of every built-in tool, in the order they are offered to the model."""
    # Imported here: the tools import asyncio and regex, which reading an agent file
    # (`hooks fire`, `hooks check`) does not need.
    from hookgate.tools.files import EditFileTool, ReadFileTool, WriteFileTool
    from hookgate.tools.search import GrepTool, ListFilesTool
    from hookgate.tools.shell import ShellTool

    return [
        ShellTool(),
        ReadFileTool(),
        WriteFileTool(),
        EditFileTool(),
        ListFilesTool(),
        GrepTool(),
    ]


#: The names of the built-in tools, as the agent file's `tools:` list spells them, in
#: `builtin_tools` order (tests/tools/test_files.py holds the two together).
BUILTIN_TOOL_NAMES: tuple[str, ...] = (
    "shell", "read_file", "write_file", "edit_file", "list_files", "grep",
)  # fmt: skip
