"""hookgate's own hook protocol: the event as flat JSON in, a flat JSON decision out.

Exit 0 with empty stdout allows; exit 0 with a JSON object is a reply; exit 2 blocks
with the reason from stdout (or its `reason` field) or stderr; any other exit is a
failure. A reply names only fields its event knows: a typo is a failure, never an
allow. Python callable hooks answer with the same objects.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping

from hookgate.hooks.events import EventSpec
from hookgate.hooks.files.yamlfile import did_you_mean
from hookgate.hooks.formats.base import (
    ALLOW,
    EXIT_BLOCK,
    BadReply,
    FormatDefaults,
    HookReply,
    block_reason,
    check_exit,
    optional_text,
    read_json_object,
)
from hookgate.hooks.process import ProcessResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ACTIONS = {"allow": False, "block": True, "deny": True, "stop": True}
#: One encoder for every event: `json.dumps` with options builds a new one per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _c_encoder() -> Callable[[Any, int], tuple[str, ...]] | None:
    """`_ENCODER`'s C part, made once (`JSONEncoder.encode` makes one per call, about
    1 µs of an event's few), without the circular check a JSON payload never needs (a
    cycle would be a RecursionError). None without the C accelerator, or where its
    (internal) signature is not 3.11's: `_ENCODER.encode` then."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    try:
        encoder: Callable[[Any, int], tuple[str, ...]] = make(
            None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",",
            False, False, True,
        )  # fmt: skip
    except TypeError:
        return None
    return encoder


_C_ENCODER = _c_encoder()
_ALWAYS = ("action", "reason", "message")


class NativeFormat(FormatDefaults):
    name = "native"
    default_timeout = 10.0

    def supports(self, event: EventSpec) -> bool:
        return True

    def encode(self, event: EventSpec, payload: Mapping[str, Any]) -> bytes:
        text = _ENCODER.encode(payload) if _C_ENCODER is None else "".join(_C_ENCODER(payload, 0))
        # A lone surrogate (bytes kept by surrogateescape) becomes its JSON escape `\udcXX`.
        return text.encode("utf-8", "backslashreplace")

    def encode_pieces(self, event: EventSpec, payload: Mapping[str, Any]) -> Iterator[bytes]:
        """`encode`'s bytes in pieces, made as they are written (`pieces`)."""
        from hookgate.hooks.formats.pieces import json_pieces  # large events alone

        return json_pieces(payload)

    def decode(
        self, event: EventSpec, payload: Mapping[str, Any], result: ProcessResult
    ) -> HookReply:
        if not result.stdout and not result.returncode:
            return ALLOW  # the usual answer, without reading it twice
        check_exit(result)
        reply = read_json_object(result.stdout)
        if result.returncode == EXIT_BLOCK:
            reason = reply.get("reason") if reply else None
            return HookReply(
                block=True, reason=reason if isinstance(reason, str) else block_reason(result)
            )
        if reply is None:
            text = result.stdout.decode("utf-8", "replace").strip()
            if not text:
                return ALLOW
            if result.stdout_truncated:
                raise BadReply("the reply passed the output cap and was cut; it cannot be read")
            raise BadReply(f"stdout is not a JSON object: {_excerpt(text)}")
        return reply_from_json(event, payload, reply)


def reply_from_json(
    event: EventSpec, payload: Mapping[str, Any], reply: Mapping[str, Any]
) -> HookReply:
    """Validate a native reply object for `event`; raises `BadReply`."""
    allowed = (*_ALWAYS, *event.mutable, *(("context",) if event.can_add_context else ()))
    for key in reply:
        if key not in allowed:
            raise BadReply(_refusal(event, str(key), allowed))
    action = reply.get("action", "allow")
    if not isinstance(action, str) or action not in ACTIONS:  # a list is unhashable
        guess = did_you_mean(action, ACTIONS) if isinstance(action, str) else None
        raise BadReply(
            f"'action' must be one of {', '.join(ACTIONS)}, got {action!r}"
            + (f"; {guess}" if guess else "")
        )
    changes = {
        key: _VALIDATORS[key](reply[key], payload.get(key)) for key in event.mutable if key in reply
    }
    return HookReply(
        block=ACTIONS[action],
        reason=optional_text(reply, "reason"),
        changes=changes,
        context=optional_text(reply, "context"),
        message=optional_text(reply, "message"),
    )


#: Reply fields only another format reads: (whose, the `format:` that reads them).
_OTHER_FORMATS = {
    "mutated": ("Mecatl", "mecatl"),
    "hookSpecificOutput": ("Claude Code", "claude"),
    "decision": ("Claude Code", "claude"),
}


def _refusal(event: EventSpec, key: str, allowed: tuple[str, ...]) -> str:
    if key == "agent":
        return "a hook cannot change which agent is asked"
    if key in event.payload or key in _VALIDATORS or key == "context":
        return f"{event.name} cannot change {key!r}; a reply may set: {', '.join(allowed)}"
    if (other := _OTHER_FORMATS.get(key)) is not None:
        return (
            f"unknown reply field {key!r}: that is {other[0]}'s reply, which the native format "
            f"does not read; give this hook format: {other[1]}"
        )
    guess = did_you_mean(key, allowed)
    return (
        f"unknown reply field {key!r}; {guess + ' ' if guess else ''}"
        f"{event.name} replies may set: {', '.join(allowed)}"
    )


def _text(value: Any, _current: Any) -> str:
    if not isinstance(value, str):
        raise BadReply(f"expected a string, got {type(value).__name__} {_excerpt(repr(value))}")
    return value


def _arguments(value: Any, _current: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadReply(f"'arguments' must be a JSON object, got {type(value).__name__}")
    return value


def _result(value: Any, current: Any) -> dict[str, Any]:
    was_error = bool(current.get("is_error")) if isinstance(current, Mapping) else False
    if isinstance(value, str):
        return {"content": value, "is_error": was_error}
    if (
        isinstance(value, dict)
        and isinstance(value.get("content"), str)
        and isinstance(value.get("is_error", was_error), bool)
        and set(value) <= {"content", "is_error"}
    ):
        return {"content": value["content"], "is_error": value.get("is_error", was_error)}
    raise BadReply('\'result\' must be a string or {"content": string, "is_error": boolean}')


def _conversation(value: Any, _current: Any) -> list[dict[str, str]]:
    if not isinstance(value, list) or not all(
        isinstance(m, dict) and set(m) == {"role", "content"}
        and all(isinstance(v, str) for v in m.values())
        for m in value
    ):  # fmt: skip
        raise BadReply('\'conversation\' must be a list of {"role": string, "content": string}')
    return value


_VALIDATORS: dict[str, Callable[[Any, Any], Any]] = {
    "prompt": _text,
    "question": _text,
    "answer": _text,
    "arguments": _arguments,
    "result": _result,
    "conversation": _conversation,
}


def _excerpt(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")
