"""Caps on what one model reply may ask for: how many tool calls, how large each one is.

A call past a cap does not run, is not screened, and is recorded without its
arguments; the model reads why in its answer, and can ask again within the caps.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from hookgate.hooks.records import NamedTuple
from hookgate.messages import ToolCall
from hookgate.tools.settings import DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_TOOL_CALLS


class CallCaps(NamedTuple):
    per_reply: int = DEFAULT_MAX_TOOL_CALLS
    """Tool calls one model reply may make (`max_tool_calls`)."""
    argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES
    """Bytes of UTF-8 JSON the arguments of one call may take (`max_argument_bytes`)."""


class RefusedCall(NamedTuple):
    """A call past a cap: what the history keeps of it, and what the model reads."""

    asked: ToolCall
    message: str

    @property
    def recorded(self) -> ToolCall:
        """The call without its arguments: they were never screened by a hook."""
        return ToolCall(self.asked.id, self.asked.name, {})


def apply_caps(calls: Sequence[ToolCall], caps: CallCaps) -> list[ToolCall | RefusedCall]:
    """`calls` in order, each one past a cap replaced by a `RefusedCall` saying which."""
    checked: list[ToolCall | RefusedCall] = []
    for index, call in enumerate(calls):
        if index >= caps.per_reply:
            checked.append(RefusedCall(call, (
                f"[not run: a reply may make at most {caps.per_reply} tool calls "
                f"(max_tool_calls); this was call {index + 1} of {len(calls)}; "
                "ask for the rest in your next reply]"
            )))  # fmt: skip
            continue
        size = len(json.dumps(call.arguments, ensure_ascii=False).encode("utf-8", "replace"))
        if size > caps.argument_bytes:
            checked.append(RefusedCall(call, (
                f"[not run: its arguments take {size} bytes, more than the "
                f"{caps.argument_bytes} a call may carry (max_argument_bytes); "
                "split the work into smaller calls]"
            )))  # fmt: skip
            continue
        checked.append(call)
    return checked
