"""A scripted Anthropic Messages API on loopback, for the real Claude Code CLI; a
request without tools (a title, a summary Claude Code asks for on the side) gets a
short text. `ToolUse` is re-exported for the tests' scripts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from agent_clis.scripted import ScriptedServer, ToolUse, Turn, send_events, send_json


class MockAnthropic(ScriptedServer):
    """The Messages API (`POST /v1/messages`, streamed or not)."""

    def tool_results(self) -> list[str]:
        """The text of each tool result the model was sent, call by call, in order."""
        seen: dict[str, str] = {}
        for request in self.requests:
            for message in request.get("messages", []):
                for block in _blocks(message):
                    if block.get("type") == "tool_result":
                        key = str(block.get("tool_use_id"))
                        seen.setdefault(key, _text_of(block.get("content")))
        return list(seen.values())

    def turn_for(self, request: dict[str, Any]) -> Turn:
        if not request.get("tools"):
            return "ok"  # a side request: a title, a summary
        return super().turn_for(request)

    def calls_made(self, request: dict[str, Any]) -> int:
        return sum(
            1
            for message in request.get("messages", [])
            if message.get("role") == "assistant"
            for block in _blocks(message)
            if block.get("type") == "tool_use"
        )

    def answer(self, handler: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        if not path.endswith("/v1/messages"):
            send_json(handler, {"input_tokens": 10})  # count_tokens and the like
            return
        turn, number, model = self.turn_for(body), len(self.requests), str(body.get("model"))
        if body.get("stream"):
            send_events(handler, _events(turn, number, model))
        else:
            send_json(handler, _message(turn, number, model))


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _usage() -> dict[str, int]:
    return {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0}  # fmt: skip


def _message(turn: Turn, number: int, model: str) -> dict[str, Any]:
    if isinstance(turn, str):
        content: list[dict[str, Any]] = [{"type": "text", "text": turn}]
        stop = "end_turn"
    else:
        content = [{"type": "tool_use", "id": f"toolu_{number:04d}", "name": turn.name,
                    "input": turn.input}]  # fmt: skip
        stop = "tool_use"
    return {"id": f"msg_{number:04d}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": _usage()}  # fmt: skip


def _events(turn: Turn, number: int, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    start = _message(turn, number, model) | {"content": [], "stop_reason": None}
    yield "message_start", {"type": "message_start", "message": start}
    if isinstance(turn, str):
        block: dict[str, Any] = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": turn}
        stop = "end_turn"
    else:
        block = {"type": "tool_use", "id": f"toolu_{number:04d}", "name": turn.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(turn.input)}
        stop = "tool_use"
    yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop,
                            "stop_sequence": None}, "usage": {"output_tokens": 5}}  # fmt: skip
    yield "message_stop", {"type": "message_stop"}


__all__ = ["MockAnthropic", "ToolUse"]
