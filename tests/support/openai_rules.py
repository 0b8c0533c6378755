"""The chat-completions message rules a strict server (OpenAI's) enforces with HTTP 400.

An assistant message with `tool_calls` must be followed, before any other message, by
one `tool` message for each of its call ids; a `tool` message must answer a call of
the assistant message just before its run of tool messages, and only once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def strict_violations(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """What a strict server would refuse in `messages`; empty when it accepts them."""
    problems: list[str] = []
    open_calls: list[str] = []  # the last assistant message's calls not yet answered
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in open_calls:
                open_calls.remove(call_id)
            else:
                problems.append(f"messages[{index}]: tool result {call_id!r} answers no open call")
            continue
        if open_calls:
            problems.append(f"messages[{index}]: calls {open_calls} have no answer before it")
        open_calls = [call["id"] for call in message.get("tool_calls") or ()]
        if role != "assistant" and open_calls:
            problems.append(f"messages[{index}]: a {role} message cannot make tool calls")
    if open_calls:
        problems.append(f"the last calls {open_calls} have no answer")
    return problems


def assert_strict_server_accepts(messages: Sequence[Mapping[str, Any]]) -> None:
    problems = strict_violations(messages)
    assert not problems, "\n".join(problems)
