"""Claude Code's tool names and argument shapes, mapped to hookgate's and back.

`shell` is `Bash`, `read_file` is `Read`, …; paths become absolute `file_path`s and
the shell timeout is in milliseconds. A tool Claude Code does not know (an MCP tool)
keeps its name and arguments. Mapping back refuses what hookgate's tool cannot take.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping

from hookgate.hooks.formats.base import BadReply

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLAUDE_TOOL_NAMES: Mapping[str, str] = {
    "shell": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "list_files": "Glob",
    "grep": "Grep",
    "ask_agent": "Agent",
    "web_fetch": "WebFetch",
}
#: Claude Code's older names, as matchers may still spell them.
_ALIASES = {"Task": "Agent"}
_HOOKGATE_NAMES = {claude: ours for ours, claude in CLAUDE_TOOL_NAMES.items()} | {
    "Task": "ask_agent"
}

#: Per tool: (hookgate argument, Claude argument, conversion), in Claude's order.
_ARGUMENTS: Mapping[str, tuple[tuple[str, str, str], ...]] = {
    "shell": (("command", "command", ""), ("timeout", "timeout", "ms")),
    "read_file": (("path", "file_path", "path"), ("offset", "offset", ""), ("limit", "limit", "")),
    "write_file": (("path", "file_path", "path"), ("content", "content", "")),
    "edit_file": (
        ("path", "file_path", "path"),
        ("old_string", "old_string", ""),
        ("new_string", "new_string", ""),
        ("replace_all", "replace_all", ""),
    ),
    "list_files": (("pattern", "pattern", ""), ("path", "path", "path")),
    "grep": (
        ("pattern", "pattern", ""),
        ("path", "path", "path"),
        ("glob", "glob", ""),
        ("ignore_case", "-i", ""),
    ),
    "ask_agent": (("question", "prompt", ""), ("agent", "subagent_type", "")),
    "web_fetch": (("url", "url", ""), ("prompt", "prompt", "")),
}
#: Claude arguments that say nothing hookgate's tool acts on, with the value that
#: keeps it so; any other value cannot map back.
_INERT: Mapping[str, Mapping[str, Any]] = {
    "shell": {"description": None, "run_in_background": False},
    "ask_agent": {"description": None},
    "grep": {"output_mode": "content", "-n": None},
}
_PLAIN_MATCHER = re.compile(r"[A-Za-z0-9_\- ,|]*\Z")


def claude_tool_name(name: str) -> str:
    """The name Claude Code gives hookgate's tool `name` (an MCP name is unchanged)."""
    return CLAUDE_TOOL_NAMES.get(name, name)


def hookgate_tool_name(claude_name: str) -> str:
    """hookgate's name of Claude Code's tool `claude_name` (`Bash` is `shell`); a tool
    hookgate has no counterpart of (an MCP tool, `WebSearch`) keeps its name."""
    return _HOOKGATE_NAMES.get(claude_name, claude_name)


def input_as_arguments(tool: str, tool_input: Mapping[str, Any], cwd: str) -> dict[str, Any]:
    """hookgate's arguments of a call Claude Code reports (`tool_input`), for hooks to
    judge: what maps is renamed and converted, anything else is kept as given."""
    arguments: dict[str, Any] = {}
    for key, value in tool_input.items():
        try:
            arguments.update(arguments_from_claude(tool, {key: value}, {}, cwd))
        except BadReply:
            arguments[key] = value
    return arguments


def compile_claude_matcher(text: str) -> re.Pattern[str] | None:
    """Claude's matcher syntax: `*`/empty is all; names and `|`/`,` lists are exact;
    anything else is an unanchored regular expression."""
    if text.strip() in ("", "*"):
        return None
    if _PLAIN_MATCHER.match(text):
        names = [name.strip() for name in re.split(r"[|,]", text) if name.strip()]
        names = [_ALIASES.get(name, name) for name in names]
        return re.compile("^(?:" + "|".join(map(re.escape, names)) + r")\Z")
    return re.compile(text)


def claude_input(tool: str, arguments: Mapping[str, Any], cwd: str) -> dict[str, Any]:
    """`tool_input`: hookgate's arguments in Claude's names and units."""
    table = _ARGUMENTS.get(tool)
    if table is None:
        return dict(arguments)
    mapped: dict[str, Any] = {}
    for ours, theirs, conversion in table:
        if ours in arguments:
            mapped[theirs] = _to_claude(arguments[ours], conversion, cwd)
    if tool == "ask_agent":
        mapped["description"] = f"ask {arguments.get('agent', 'an agent')}"
    return mapped


def arguments_from_claude(
    tool: str, updated: Any, original: Mapping[str, Any], cwd: str
) -> dict[str, Any]:
    """hookgate's arguments from an `updatedInput`; raises `BadReply` for what cannot map."""
    if not isinstance(updated, dict):
        raise BadReply(f"'updatedInput' must be a JSON object, got {type(updated).__name__}")
    table = _ARGUMENTS.get(tool)
    if table is None:
        return updated
    by_claude = {theirs: (ours, conversion) for ours, theirs, conversion in table}
    inert = _INERT.get(tool, {})
    # What Claude has no name for (ask_agent's with_context) is kept as it was.
    arguments = {key: value for key, value in original.items() if key not in _ours(table)}
    for key, value in updated.items():
        if key in by_claude:
            ours, conversion = by_claude[key]
            arguments[ours] = _from_claude(value, conversion, original.get(ours), cwd, key)
        elif key in inert and (inert[key] is None or value == inert[key]):
            continue
        else:
            takes = ", ".join(theirs for _, theirs, _ in table)
            raise BadReply(
                f"updatedInput.{key}={value!r} has no counterpart in hookgate's "
                f"{tool} ({claude_tool_name(tool)} here takes {takes}); not applied"
            )
    return arguments


#: The tools whose Claude `tool_response` counts or lists the result's lines.
_COUNTS_LINES = frozenset({"read_file", "list_files", "grep"})


def claude_response(
    tool: str, arguments: Mapping[str, Any], result: Mapping[str, Any], cwd: str
) -> Any:
    """`tool_response`: the result in the shape Claude Code gives that tool's."""
    text = str(result.get("content", ""))
    if tool == "shell":  # before the lines: a long output is not split for nothing
        return {"stdout": text, "stderr": "", "interrupted": False}
    path = _to_claude(arguments.get("path", ""), "path", cwd)
    lines = text.splitlines() if tool in _COUNTS_LINES else []
    if tool == "read_file":
        file = {"filePath": path, "content": text, "numLines": len(lines),
                "startLine": arguments.get("offset", 1), "totalLines": len(lines)}  # fmt: skip
        return {"type": "text", "file": file}
    if tool == "write_file":
        kind = "update" if text.startswith("replaced") else "create"
        return {"type": kind, "filePath": path, "content": arguments.get("content", "")}
    if tool == "edit_file":
        return {"filePath": path, "oldString": arguments.get("old_string", ""),
                "newString": arguments.get("new_string", ""),
                "replaceAll": bool(arguments.get("replace_all", False))}  # fmt: skip
    if tool == "list_files":
        return {"filenames": lines, "numFiles": len(lines), "truncated": False}
    if tool == "grep":
        return {"mode": "content", "filenames": [], "numFiles": 0, "content": text,
                "numLines": len(lines)}  # fmt: skip
    return {"content": [{"type": "text", "text": text}], "isError": bool(result.get("is_error"))}


def result_from_claude(tool: str, value: Any, current: Any) -> dict[str, Any]:
    """hookgate's result from an `updatedToolOutput`; raises `BadReply`."""
    was_error = bool(current.get("is_error")) if isinstance(current, Mapping) else False
    text = _response_text(value)
    if text is None:
        raise BadReply(
            f"'updatedToolOutput' for {claude_tool_name(tool)} must be a string or its "
            f"tool_response shape with the text in it; got {_excerpt(value)}; not applied"
        )
    return {"content": text, "is_error": was_error}


def _response_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("stdout"), str):
        stderr = value.get("stderr")
        return str(value["stdout"]) + (
            f"\n[stderr]\n{stderr}" if isinstance(stderr, str) and stderr else ""
        )
    if isinstance(value.get("file"), dict) and isinstance(value["file"].get("content"), str):
        return str(value["file"]["content"])
    content = value.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(b, dict) and isinstance(b.get("text"), str) for b in content
    ):
        return "\n".join(block["text"] for block in content)
    return None


def _ours(table: tuple[tuple[str, str, str], ...]) -> set[str]:
    return {ours for ours, _, _ in table}


def _to_claude(value: Any, conversion: str, cwd: str) -> Any:
    if conversion == "path" and isinstance(value, str):
        return os.path.normpath(os.path.join(cwd, value))
    if conversion == "ms" and isinstance(value, int | float) and not isinstance(value, bool):
        # The model's value, unvalidated: one past what a float holds passes unchanged
        # rather than fail the encoding (a failing guard fails open under `warn`).
        with contextlib.suppress(OverflowError):
            millis = value * 1000
            return int(millis) if float(millis).is_integer() else millis
    return value


def _from_claude(value: Any, conversion: str, original: Any, cwd: str, key: str) -> Any:
    if original is not None and value == _to_claude(original, conversion, cwd):
        return original  # unchanged: the model's own spelling stays
    if conversion == "ms":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadReply(f"updatedInput.{key} must be milliseconds, got {value!r}; not applied")
        try:
            return value / 1000
        except OverflowError:
            raise BadReply(f"updatedInput.{key} is too large: {value!r}; not applied") from None
    return value


def _excerpt(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
