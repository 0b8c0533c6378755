"""The tools an agent can call: the `Tool` protocol, its registry, and the built-in tools.

Built in: `shell` (bash in the project directory), `read_file`, `write_file`,
`edit_file`, `list_files`, `grep`, and `web_fetch`, offered only where the agent file's
`tools:` lists it. MCP tools implement the same `Tool` protocol. `settings` reads the
agent file's `workspace`, `shell` and per-reply caps; `sandbox` is the OS sandbox of
the processes the tools start, and the workspace boundaries the file tools check.
"""

from __future__ import annotations

from collections.abc import Collection

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


#: Each built-in tool by the name the agent file's `tools:` spells, in the order they are
#: offered to the model: the module and class that make it. A tool's module is imported
#: only where the tool is offered: they import asyncio, regex and the http client, which
#: reading an agent file (`hooks fire`, `hooks check`) does not need.
_BUILTIN_TOOLS = {
    "shell": ("hookgate.tools.shell", "ShellTool"),
    "read_file": ("hookgate.tools.files", "ReadFileTool"),
    "write_file": ("hookgate.tools.files", "WriteFileTool"),
    "edit_file": ("hookgate.tools.files", "EditFileTool"),
    "list_files": ("hookgate.tools.search", "ListFilesTool"),
    "grep": ("hookgate.tools.search", "GrepTool"),
    "web_fetch": ("hookgate.tools.webfetch", "WebFetchTool"),
}
#: The names of the built-in tools, in `builtin_tools` order.
BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(_BUILTIN_TOOLS)


def builtin_tools(names: Collection[str] = BUILTIN_TOOL_NAMES) -> list[Tool]:
    """A fresh instance of each built-in tool `names` lists, in the order they are offered."""
    import importlib  # a session's tools alone: not imported where an agent file is read

    tools = []
    for name, (module, class_name) in _BUILTIN_TOOLS.items():
        if name in names:
            tools.append(getattr(importlib.import_module(module), class_name)())
    return tools


#: The tools offered when the agent file has no `tools:`: all but those that reach the web.
DEFAULT_TOOL_NAMES: tuple[str, ...] = tuple(n for n in BUILTIN_TOOL_NAMES if n != "web_fetch")
