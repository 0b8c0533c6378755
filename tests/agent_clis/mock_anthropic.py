"""A small Anthropic Messages API on loopback, for the real Claude Code CLI: it plays a
script of model turns (tool calls, then a final answer), streamed as server-sent
events, and keeps every request it was sent.

The turn it plays is chosen by the conversation it is sent: the number of tool calls
the assistant already made in it. A request without tools (a title, a summary Claude
Code asks for on the side) gets a short text.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple


class ToolUse(NamedTuple):
    name: str
    input: dict[str, Any]


Turn = ToolUse | str


class MockAnthropic:
    """`with MockAnthropic(script) as server:` serves on `server.url` until the block ends."""

    def __init__(self, script: Sequence[Turn]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> MockAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def tool_results(self) -> list[str]:
        """The text of each tool result the model was sent, call by call, in order."""
        seen: dict[str, str] = {}
        for request in self.requests:
            for message in request.get("messages", []):
                for block in _blocks(message):
                    if block.get("type") == "tool_result":
                        seen.setdefault(
                            str(block.get("tool_use_id")), _text_of(block.get("content"))
                        )
        return list(seen.values())

    def turn_for(self, request: dict[str, Any]) -> Turn:
        if not request.get("tools"):
            return "ok"
        made = sum(
            1
            for message in request.get("messages", [])
            if message.get("role") == "assistant"
            for block in _blocks(message)
            if block.get("type") == "tool_use"
        )
        return self.script[min(made, len(self.script) - 1)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._json({})

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.split("?")[0].endswith("/v1/messages"):
                    self._json({"input_tokens": 10})  # count_tokens and the like
                    return
                with mock._lock:
                    mock.requests.append(body)
                    turn = mock.turn_for(body)
                    number = len(mock.requests)
                if body.get("stream"):
                    self._stream(turn, number, str(body.get("model", "mock")))
                else:
                    self._json(_message(turn, number, str(body.get("model", "mock"))))

            def _json(self, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, turn: Turn, number: int, model: str) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for kind, data in _events(turn, number, model):
                    self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        return Handler


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
