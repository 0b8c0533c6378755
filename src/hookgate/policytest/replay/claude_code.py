"""Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`).

Each line is an entry; `type: user` entries hold the question (a string, or text
blocks) or `tool_result` blocks, `type: assistant` entries hold `tool_use` blocks.
Tools map back to hookgate's by the claude format's own table (`claude_tools`):
`Bash` is `shell`, `Read`'s `file_path` is `read_file`'s `path`. A result marked
`is_error` whose text says the call was refused (a hook, a rule, the user) was a denial.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hookgate.hooks.formats.base import BadReply
from hookgate.hooks.formats.claude_tools import CLAUDE_TOOL_NAMES, arguments_from_claude
from hookgate.policytest.replay.recorded import (
    RecordedCall,
    RecordedPrompt,
    Recording,
    is_marker,
    json_lines,
    prompt_with_answer,
)
from hookgate.tools import ToolResult

_OURS = {claude: ours for ours, claude in CLAUDE_TOOL_NAMES.items()}
#: What Claude Code's results say of a call that did not run.
_REFUSED = re.compile(r"denied|blocked|doesn't want to proceed|was rejected|hook error", re.I)
#: Questions Claude Code records that nobody typed (slash commands, their output).
_NOT_TYPED = ("<command-", "<local-command-", "Caveat:")


def looks_like(first: object) -> bool:
    return (
        isinstance(first, dict)
        and first.get("type") in ("user", "assistant", "summary")
        and ("message" in first or "sessionId" in first or "leafUuid" in first)
    )


def read(path: Path) -> Recording:
    items: list[RecordedCall | RecordedPrompt] = []
    calls: dict[str, int] = {}
    cwd: Path | None = None
    for number, entry in json_lines(path):
        if not isinstance(entry, dict) or not isinstance(entry.get("message"), dict):
            continue
        if cwd is None and isinstance(entry.get("cwd"), str):
            cwd = Path(entry["cwd"])
        content = entry["message"].get("content")
        if entry.get("type") == "user" and not entry.get("isMeta"):
            _user(content, number, items, calls)
        elif entry.get("type") == "assistant" and isinstance(content, list):
            _assistant(content, number, items, calls, str(cwd or "/"))
    return Recording(str(path), "claude-code", cwd, items)


def _user(content: Any, number: int, items: list[Any], calls: dict[str, int]) -> None:
    if isinstance(content, str):
        if not content.startswith(_NOT_TYPED) and not is_marker(content):
            items.append(RecordedPrompt(content, number))
        return
    if not isinstance(content, list):
        return
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            index = calls.pop(str(block.get("tool_use_id")), None)
            if index is not None:
                items[index] = _answered(items[index], block)
    if texts and not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        text = "\n".join(str(t) for t in texts)
        if not text.startswith(_NOT_TYPED) and not is_marker(text):
            items.append(RecordedPrompt(text, number))


def _assistant(
    content: list[Any], number: int, items: list[Any], calls: dict[str, int], cwd: str
) -> None:
    texts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            name, given = str(block.get("name")), block.get("input")
            tool, arguments = _ours_of(name, given if isinstance(given, dict) else {}, cwd)
            calls[str(block.get("id"))] = len(items)
            items.append(RecordedCall(tool, arguments, None, "unknown", number, name))
    if texts:
        prompt_with_answer(items, "\n".join(texts))


def _ours_of(name: str, given: dict[str, Any], cwd: str) -> tuple[str, dict[str, Any]]:
    """hookgate's tool and arguments for Claude's, or Claude's own where they do not map."""
    ours = _OURS.get(name, "Agent" if name == "Task" else None)
    ours = _OURS.get("Agent") if name == "Task" else ours
    if ours is None:
        return name, given
    try:
        return ours, arguments_from_claude(ours, given, {}, cwd)
    except BadReply:
        return name, given


def _answered(call: RecordedCall, block: dict[str, Any]) -> RecordedCall:
    text = _text(block.get("content"))
    if block.get("is_error"):
        then = "denied" if _REFUSED.search(text) else "failed"
        return call._replace(result=ToolResult(text, is_error=True), then=then)
    return call._replace(result=ToolResult(text), then="ran")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""
