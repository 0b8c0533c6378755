"""The Mecatl hook contract, exactly: `{"Phase","Tool","Input","SessionID"}` on stdin,
with Mecatl's tool names (`Shell`), which matchers are tested against too.

Exit 0 allows; its stdout is a plain message, or a JSON object read as the envelope
`{"mutated", "message"}`, whose `mutated` must have the shape of `Input` or the hook
has failed (an unchanged `Input` is no mutation, on any phase). Exit 2 blocks, the reason from stdout (preferred) or stderr. Any other
exit is a hook error; on the team phases, which only annotate, exit 2 is a message.
Default timeout: 30 s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hookgate.hooks.events import EventSpec
from hookgate.hooks.formats.base import (
    EXIT_BLOCK,
    BadReply,
    FormatDefaults,
    HookReply,
    block_reason,
    check_exit,
    read_json_object,
)
from hookgate.hooks.formats.claude_tools import CLAUDE_TOOL_NAMES
from hookgate.hooks.process import ProcessResult

#: The canonical field each mutable phase's `Input` stands for.
_MUTATION_TARGET = {
    "PreToolUse": "arguments",
    "PostToolUse": "result",
    "UserPromptSubmit": "prompt",
}
_COMMON = (
    "event", "session_id", "cwd", "asked", "tool", "transcript_path", "permission_mode",
)  # fmt: skip
#: Mecatl's names of hookgate's tools, as its hooks read them in `Tool` and match them:
#: the contract's `Shell`, `WebFetch` and `WebSearch`; otherwise Claude Code's names,
#: which Mecatl shares (`Read`, `Edit`, …). Another tool (`mcp__server__tool`) keeps its own.
MECATL_TOOL_NAMES: Mapping[str, str] = {
    **CLAUDE_TOOL_NAMES,
    "shell": "Shell",
    "web_search": "WebSearch",
}
#: Phases the seed says cannot block: an exit 2 there is a message, whatever hookgate's
#: own formats let a block do on the same event.
ANNOTATE_ONLY = ("TeammateIdle", "TaskCreated", "TaskCompleted")


class MecatlFormat(FormatDefaults):
    name = "mecatl"
    default_timeout = 30.0

    def supports(self, event: EventSpec) -> bool:
        return event.mecatl_phase is not None

    def match_name(self, name: str) -> str:
        return mecatl_tool_name(name)

    def encode(self, event: EventSpec, payload: Mapping[str, Any]) -> bytes:
        document = {
            "Phase": event.mecatl_phase,
            "Tool": mecatl_tool_name(str(payload.get("tool", ""))),
            "Input": phase_input(event, payload),
            "SessionID": payload.get("session_id", ""),
        }
        # A lone surrogate (bytes kept by surrogateescape) becomes its JSON escape `\udcXX`.
        return json.dumps(document, ensure_ascii=False).encode("utf-8", "backslashreplace")

    def decode(
        self, event: EventSpec, payload: Mapping[str, Any], result: ProcessResult
    ) -> HookReply:
        check_exit(result)
        if result.returncode == EXIT_BLOCK:
            if event.mecatl_phase in ANNOTATE_ONLY:
                return HookReply(message=f"objected: {block_reason(result)}")
            return HookReply(block=True, reason=block_reason(result))
        envelope = read_json_object(result.stdout)
        if envelope is None:
            text = result.stdout.decode("utf-8", "replace").strip()
            return HookReply(message=text or None)
        message = envelope.get("message")
        message = None if message is None else str(message)
        if "mutated" not in envelope:
            return HookReply(message=message)
        return HookReply(changes=_mutation(event, payload, envelope["mutated"]), message=message)


def mecatl_tool_name(name: str) -> str:
    """The name Mecatl gives hookgate's tool `name` (`Shell` for `shell`)."""
    return MECATL_TOOL_NAMES.get(name, name)


def phase_input(event: EventSpec, payload: Mapping[str, Any]) -> Any:
    """The phase-specific `Input`: raw arguments, the result, `{"prompt"}`, or the fields."""
    target = _MUTATION_TARGET.get(event.mecatl_phase or "")
    if target == "prompt":
        return {"prompt": payload.get("prompt", "")}
    if target:
        return payload.get(target)
    return {key: value for key, value in payload.items() if key not in _COMMON}


def _mutation(event: EventSpec, payload: Mapping[str, Any], mutated: Any) -> dict[str, Any]:
    """The changes `mutated` asks for; echoing `Input` back unchanged asks for none.

    Hooks written for Mecatl often answer with `Input` as they read it, on every phase;
    refusing that on a phase that cannot be mutated would abort a run over nothing.
    """
    original = phase_input(event, payload)
    if mutated == original:
        return {}
    target = _MUTATION_TARGET.get(event.mecatl_phase or "")
    if target is None:
        raise BadReply(f"phase {event.mecatl_phase} cannot be mutated; 'mutated' not applied")
    if not _same_shape(original, mutated, loose_keys=target == "arguments"):
        raise BadReply(
            f"'mutated' does not have the shape of {event.mecatl_phase}'s Input "
            f"({_shape(original)}); not applied"
        )
    return {"prompt": mutated["prompt"]} if target == "prompt" else {target: mutated}


def _same_shape(original: Any, mutated: Any, *, loose_keys: bool) -> bool:
    """Tool arguments need only be an object; the fixed inputs keep their keys and types."""
    if not isinstance(original, dict) or not isinstance(mutated, dict):
        return False
    if loose_keys:
        return True
    return set(original) == set(mutated) and all(
        _json_type(original[key]) == _json_type(mutated[key]) for key in original
    )


def _json_type(value: Any) -> str:
    return "bool" if isinstance(value, bool) else type(value).__name__


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f'"{k}": {_json_type(v)}' for k, v in value.items()) + "}"
    return _json_type(value)
