"""Codex rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Each line is `{timestamp, type, payload}` (codex-rs/protocol `RolloutLine`); replay
reads `response_item` payloads: a `message` of role `user` (not Codex's own
`<environment_context>`-style ones), a `function_call` (arguments as a JSON string)
or `local_shell_call`, each answered by a `function_call_output` of the same
`call_id`, and `custom_tool_call`s (`apply_patch`). Shell tools (`shell`,
`container.exec`, `shell_command`, `exec_command`) map to hookgate's `shell`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hookgate.policytest.replay.recorded import (
    RecordedCall,
    RecordedPrompt,
    Recording,
    command_line,
    json_lines,
    prompt_with_answer,
)
from hookgate.tools import ToolResult

#: Codex's shell tools and the argument that holds the command (a line or an argv).
SHELL_TOOLS = {"shell": "command", "container.exec": "command", "shell_command": "command",
               "exec_command": "cmd", "local_shell": "command"}  # fmt: skip
_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
#: What Codex's output says of a command it refused, or one that failed.
_REFUSED = re.compile(r"rejected|declined|denied by|not permitted", re.I)
_EXIT = re.compile(r"(?:Process exited with code|exit code:?)\s*(\d+)", re.I)


def looks_like(first: object) -> bool:
    return isinstance(first, dict) and first.get("type") in _TYPES and "payload" in first


def read(path: Path) -> Recording:
    items: list[RecordedCall | RecordedPrompt] = []
    calls: dict[str, int] = {}
    cwd: Path | None = None
    for number, line in json_lines(path):
        if not isinstance(line, dict) or not isinstance(line.get("payload"), dict):
            continue
        payload = line["payload"]
        if line.get("type") == "session_meta" and isinstance(payload.get("cwd"), str):
            cwd = Path(payload["cwd"])
        if line.get("type") == "response_item":
            _item(payload, number, items, calls)
    return Recording(str(path), "codex", cwd, items)


def _item(payload: dict[str, Any], number: int, items: list[Any], calls: dict[str, int]) -> None:
    kind = payload.get("type")
    if kind == "message":
        text = "".join(
            str(part.get("text", ""))
            for part in payload.get("content") or ()
            if isinstance(part, dict)
        )
        if payload.get("role") == "user" and text and not text.lstrip().startswith("<"):
            items.append(RecordedPrompt(text, number))
        elif payload.get("role") == "assistant" and text:
            prompt_with_answer(items, text)
    elif kind in ("function_call", "local_shell_call", "custom_tool_call"):
        name, arguments = _call(payload)
        calls[str(payload.get("call_id") or payload.get("id"))] = len(items)
        items.append(RecordedCall(*_ours(name, arguments), None, "unknown", number, name))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        index = calls.pop(str(payload.get("call_id")), None)
        if index is not None:
            items[index] = _answered(items[index], _output_text(payload.get("output")))


def _call(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if payload.get("type") == "local_shell_call":
        action = payload.get("action") or {}
        return "local_shell", {"command": action.get("command")}
    if payload.get("type") == "custom_tool_call":
        return str(payload.get("name")), {"input": payload.get("input")}
    try:
        arguments = json.loads(str(payload.get("arguments") or "{}"))
    except ValueError:
        arguments = {"arguments": payload.get("arguments")}
    return str(payload.get("name")), arguments if isinstance(arguments, dict) else {}


def _ours(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """`shell` with one command line for Codex's shell tools; any other tool as it is."""
    key = SHELL_TOOLS.get(name)
    line = command_line(arguments.get(key)) if key else None
    return ("shell", {"command": line}) if line is not None else (name, arguments)


def _answered(call: RecordedCall, text: str) -> RecordedCall:
    if _REFUSED.search(text.split("\n", 1)[0]):
        return call._replace(result=ToolResult(text, is_error=True), then="denied")
    code = _EXIT.search(text)
    failed = code is not None and code.group(1) != "0"
    return call._replace(
        result=ToolResult(text, is_error=failed), then="failed" if failed else "ran"
    )


def _output_text(output: Any) -> str:
    """`FunctionCallOutputPayload`: a string, a list of content items, or an object."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(str(i.get("text", "")) for i in output if isinstance(i, dict))
    if isinstance(output, dict):
        return str(output.get("content", ""))
    return ""
