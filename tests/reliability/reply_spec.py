"""An independent reading of how a hook's answer is read (docs/hooks.md), for the fuzz tests.

`expected_native` and `expected_mecatl` say what a finished hook process means: the
decision it stands for, as the fields of a `HookReply`, or `FAILED`. Nothing here
imports `hookgate`: the tests compare these readings with the engine's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: What a hook's answer means when the hook has failed (docs/hooks.md, Failures).
FAILED = "failed"
ACTIONS = {"allow": False, "block": True, "deny": True, "stop": True}
#: The events table of docs/hooks.md: what each event's hooks may change...
MUTABLE = {
    "preGeneration": ("prompt",),
    "preToolCall": ("arguments",),
    "postToolCall": ("result",),
    "preAsk": ("question", "conversation"),
    "postAsk": ("answer",),
}
#: ...which may add context for the model...
CONTEXT = ("preGeneration", "preToolCall", "postAsk")
#: ...which a block stops (on the others it only annotates)...
CAN_BLOCK = (
    "sessionStart", "preGeneration", "preToolCall", "preAsk",
    "teammateIdle", "taskCreated", "taskCompleted",
    "preCompact",  # a block skips that compaction
)  # fmt: skip
#: ...though the Mecatl contract's team phases only annotate, exit 2 included...
MECATL_ANNOTATE_ONLY = ("teammateIdle", "taskCreated", "taskCompleted")
#: ...and the field each mutable Mecatl phase's `Input` stands for.
MECATL_INPUT = {"preGeneration": "prompt", "preToolCall": "arguments", "postToolCall": "result"}


@dataclass(frozen=True)
class Decision:
    """What a hook's answer means, field by field as `HookReply` holds it."""

    block: bool = False
    reason: str | None = None
    changes: Mapping[str, Any] = field(default_factory=dict)
    context: str | None = None
    message: str | None = None


def native_reply_valid(event: str, reply: Mapping[Any, Any]) -> bool:
    """Whether a native reply object can be applied to `event` (docs: What the hook answers)."""
    allowed = {"action", "reason", "message", *MUTABLE.get(event, ())}
    if event in CONTEXT:
        allowed.add("context")
    if not all(isinstance(key, str) and key in allowed for key in reply):
        return False
    action = reply.get("action", "allow")
    if not (isinstance(action, str) and action in ACTIONS):
        return False
    if not all(isinstance(reply.get(k), str | None) for k in ("reason", "message", "context")):
        return False
    return all(_change_valid(key, reply[key]) for key in MUTABLE.get(event, ()) if key in reply)


def _change_valid(key: str, value: Any) -> bool:
    if key in ("prompt", "question", "answer"):
        return isinstance(value, str)
    if key == "arguments":
        return isinstance(value, dict)
    if key == "result":
        if isinstance(value, str):
            return True
        return (
            isinstance(value, dict)
            and set(value) <= {"content", "is_error"}
            and isinstance(value.get("content"), str)
            and isinstance(value.get("is_error", False), bool)
        )
    return isinstance(value, list) and all(  # conversation
        isinstance(m, dict)
        and set(m) == {"role", "content"}
        and all(isinstance(v, str) for v in m.values())
        for m in value
    )


def native_decision(event: str, payload: Mapping[str, Any], reply: Mapping[str, Any]) -> Decision:
    """The decision of a valid native reply object."""
    changes = {}
    for key in MUTABLE.get(event, ()):
        if key in reply:
            changes[key] = _normalised(key, reply[key], payload)
    return Decision(
        block=ACTIONS[reply.get("action", "allow")],
        reason=reply.get("reason"),
        changes=changes,
        context=reply.get("context"),
        message=reply.get("message"),
    )


def _normalised(key: str, value: Any, payload: Mapping[str, Any]) -> Any:
    """A replaced result keeps the current `is_error` unless the reply sets it."""
    if key != "result":
        return value
    current = payload.get("result")
    was_error = bool(current.get("is_error")) if isinstance(current, Mapping) else False
    if isinstance(value, str):
        return {"content": value, "is_error": was_error}
    return {"content": value["content"], "is_error": value.get("is_error", was_error)}


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace").strip()


def _json_object(stdout: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(_text(stdout))
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def expected_native(
    event: str, payload: Mapping[str, Any], stdout: bytes, stderr: bytes, code: int
) -> Decision | str:
    """What the native format makes of a hook that exited `code` with this output."""
    if code not in (0, 2):
        return FAILED
    reply = _json_object(stdout)
    if code == 2:
        reason = reply.get("reason") if reply else None
        if not isinstance(reason, str):
            reason = _text(stdout) or _text(stderr) or None
        return Decision(block=True, reason=reason)
    if reply is None:
        return Decision() if not _text(stdout) else FAILED
    if not native_reply_valid(event, reply):
        return FAILED
    return native_decision(event, payload, reply)


#: The envelope's fields, which a Mecatl `Input` leaves out: it holds the event's own.
ENVELOPE = (
    "event", "session_id", "cwd", "asked", "tool", "transcript_path", "permission_mode",
)  # fmt: skip


def mecatl_input(event: str, payload: Mapping[str, Any]) -> Any:
    """The seed's `Input`: the prompt, the arguments or the result; else the event's fields."""
    target = MECATL_INPUT.get(event)
    if target is None:
        return {key: value for key, value in payload.items() if key not in ENVELOPE}
    return {"prompt": payload.get("prompt", "")} if target == "prompt" else payload.get(target)


def expected_mecatl(
    event: str, payload: Mapping[str, Any], stdout: bytes, stderr: bytes, code: int
) -> Decision | str:
    """What the mecatl format makes of it: exit 2 blocks, exit 0 reads `{mutated, message}`."""
    if code not in (0, 2):
        return FAILED
    if code == 2 and event in MECATL_ANNOTATE_ONLY:
        return Decision(message=f"objected: {_text(stdout) or _text(stderr) or 'no reason given'}")
    if code == 2:
        return Decision(block=True, reason=_text(stdout) or _text(stderr) or None)
    envelope = _json_object(stdout)
    if envelope is None:
        return Decision(message=_text(stdout) or None)
    message = envelope.get("message")
    message = None if message is None else str(message)
    if "mutated" not in envelope:
        return Decision(message=message)
    target, mutated = MECATL_INPUT.get(event), envelope["mutated"]
    if mutated == mecatl_input(event, payload):
        return Decision(message=message)  # Input echoed back unchanged: no mutation, any phase
    if target is None or not _same_shape(mecatl_input(event, payload), mutated, target):
        return FAILED
    value = mutated["prompt"] if target == "prompt" else mutated
    return Decision(changes={target: value}, message=message)


def _same_shape(original: Any, mutated: Any, target: str) -> bool:
    """Tool arguments need only be an object; the fixed inputs keep their keys and JSON types."""
    if not (isinstance(original, dict) and isinstance(mutated, dict)):
        return False
    if target == "arguments":
        return True
    return set(original) == set(mutated) and all(
        _kind(original[key]) == _kind(mutated[key]) for key in original
    )


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return type(value).__name__
