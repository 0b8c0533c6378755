"""An independent reading of the scripted model's script format (docs/runtime.md, Models).

`violations(script)` lists each broken rule with the `where` an error must name
(`[1].tool_calls[0].name`) and whether it is an unknown key, which must always be
reported. Nothing here imports `hookgate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reliability.agentfile_spec import KeyPath, index

REPLY_KEYS = ("text", "tool_calls", "expect", "error", "delay")
CALL_KEYS = ("name", "arguments")


@dataclass(frozen=True)
class ScriptViolation:
    path: KeyPath
    """The node an error must point at (its line comes from the rendering)."""
    where: str
    """How the loader's message names that node."""
    unknown_key: bool = False


def violations(script: Any) -> list[ScriptViolation]:
    """Every rule the parsed `script` breaks."""
    if not isinstance(script, list) or not script:
        return [ScriptViolation((), "top level")]
    found: list[ScriptViolation] = []
    for position, reply in enumerate(script):
        found.extend(_reply(reply, (index(position),), f"[{position}]"))
    return found


def _reply(reply: Any, path: KeyPath, where: str) -> list[ScriptViolation]:
    if not isinstance(reply, Mapping):
        return [ScriptViolation(path, where)]
    found = _unknown_keys(reply, path, where, REPLY_KEYS)
    for key in ("text", "expect", "error"):
        if key in reply and not isinstance(reply[key], str):
            found.append(ScriptViolation((*path, key), f"{where}.{key}"))
    delay = reply.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not delay >= 0:
        found.append(ScriptViolation((*path, "delay"), f"{where}.delay"))
    if "tool_calls" in reply:
        found.extend(_tool_calls(reply["tool_calls"], (*path, "tool_calls"), f"{where}.tool_calls"))
    if not {"text", "tool_calls", "error"} & set(reply):
        found.append(ScriptViolation(path, where))
    if "error" in reply and {"text", "tool_calls"} & set(reply):
        found.append(ScriptViolation(path, where))
    return found


def _tool_calls(calls: Any, path: KeyPath, where: str) -> list[ScriptViolation]:
    if not isinstance(calls, list):
        return [ScriptViolation(path, where)]
    found: list[ScriptViolation] = []
    for position, call in enumerate(calls):
        here, at = (*path, index(position)), f"{where}[{position}]"
        if not isinstance(call, Mapping):
            found.append(ScriptViolation(here, at))
            continue
        found.extend(_unknown_keys(call, here, at, CALL_KEYS))
        if "name" not in call:
            found.append(ScriptViolation(here, at))
        elif not isinstance(call["name"], str):
            found.append(ScriptViolation((*here, "name"), f"{at}.name"))
        if "arguments" in call and not (
            isinstance(call["arguments"], Mapping) and _json(call["arguments"])
        ):
            found.append(ScriptViolation((*here, "arguments"), f"{at}.arguments"))
    return found


def _unknown_keys(
    node: Mapping[Any, Any], path: KeyPath, where: str, allowed: tuple[str, ...]
) -> list[ScriptViolation]:
    return [
        ScriptViolation((*path, key), f"{where}.{key}", unknown_key=True)
        for key in node
        if not (isinstance(key, str) and key in allowed)
    ]


def _json(value: Any) -> bool:
    """A JSON value: objects have string keys; YAML's dates, sets and bytes are not JSON."""
    if isinstance(value, Mapping):
        return all(isinstance(key, str) and _json(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_json(item) for item in value)
    return value is None or isinstance(value, bool | int | float | str)
