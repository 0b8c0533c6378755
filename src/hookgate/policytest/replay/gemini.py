"""Gemini CLI chat files (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, or the older
`.json`).

A JSONL file's first line is the session's metadata, then each line is a message
record (`{id, type: user|gemini|…, content, toolCalls?}`: a later record of the same
id replaces the earlier) or `{"$set": {...}}` (a `messages` list there replaces them
all), as Gemini CLI's `ChatRecordingService` writes and reads them; a `.json` file is
one object with `messages`. A tool call carries `name`, `args`, `status` and
`result` (function-response parts, the output under `response.output`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hookgate.hooks import ConfigError
from hookgate.policytest.replay.recorded import (
    RecordedCall,
    RecordedPrompt,
    Recording,
    json_lines,
    prompt_with_answer,
)
from hookgate.tools import ToolResult

#: Gemini CLI's tools with a hookgate counterpart: its name, and argument names mapped.
TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "run_shell_command": ("shell", {"command": "command"}),
    "read_file": ("read_file", {"file_path": "path", "absolute_path": "path"}),
    "write_file": ("write_file", {"file_path": "path", "content": "content"}),
    "replace": ("edit_file", {"file_path": "path", "old_string": "old_string",
                              "new_string": "new_string"}),
    "glob": ("list_files", {"pattern": "pattern", "dir_path": "path"}),
    "grep_search": ("grep", {"pattern": "pattern", "dir_path": "path"}),
    "search_file_content": ("grep", {"pattern": "pattern", "path": "path"}),
}  # fmt: skip
_THEN = {"success": "ran", "error": "failed", "cancelled": "denied"}


def looks_like(first: object) -> bool:
    return isinstance(first, dict) and "sessionId" in first and "projectHash" in first


def read(path: Path) -> Recording:
    messages: dict[str, tuple[int, dict[str, Any]]] = {}
    if path.suffix == ".json":
        try:
            whole = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path}: not a Gemini CLI chat file: {exc}") from exc
        records: list[tuple[int, Any]] = [(1, m) for m in whole.get("messages", [])]
    else:
        records = list(json_lines(path))
    for number, record in records:
        if not isinstance(record, dict):
            continue
        replaced = (
            record.get("$set", {}).get("messages") if isinstance(record.get("$set"), dict) else None
        )
        if isinstance(replaced, list):
            messages = {str(m.get("id")): (number, m) for m in replaced if isinstance(m, dict)}
        elif "id" in record and "type" in record:
            messages[str(record["id"])] = (number, record)
    items: list[RecordedCall | RecordedPrompt] = []
    for number, message in messages.values():
        _message(message, number, items)
    return Recording(str(path), "gemini", None, items)


def _message(message: dict[str, Any], number: int, items: list[Any]) -> None:
    text = _text(message.get("content"))
    if message.get("type") == "user":
        if text and not text.lstrip().startswith("<"):
            items.append(RecordedPrompt(text, number))
        return
    if message.get("type") != "gemini":
        return
    for call in message.get("toolCalls") or ():
        if isinstance(call, dict):
            items.append(_call(call, number))
    if text:
        prompt_with_answer(items, text)


def _call(call: dict[str, Any], number: int) -> RecordedCall:
    name = str(call.get("name"))
    args = call.get("args")
    given: dict[str, Any] = args if isinstance(args, dict) else {}
    tool, arguments = name, dict(given)
    if name in TOOLS:
        ours, names = TOOLS[name]
        tool = ours
        arguments = {names[key]: value for key, value in given.items() if key in names}
    then = _THEN.get(str(call.get("status")), "unknown")
    output = _output(call.get("result"))
    result = None if output is None else ToolResult(output, is_error=then == "failed")
    return RecordedCall(tool, arguments, result, then, number, name)


def _output(parts: Any) -> str | None:
    if not isinstance(parts, list):
        return None
    texts = []
    for part in parts:
        response = (
            part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
        )
        if isinstance(response, dict):
            value = response.get("output", response.get("error", ""))
            texts.append(value if isinstance(value, str) else json.dumps(value))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""
