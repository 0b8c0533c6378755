"""A small OpenAI Responses API on loopback, for the real Codex CLI: it plays a script
of model turns (function calls, then a final answer), streamed as server-sent events,
and keeps every request it was sent.

The turn it plays is the number of function calls already answered in the request's
input; a call names the tool the way the request's `tools` offer it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent_clis.mock_anthropic import ToolUse

Turn = ToolUse | str


class MockResponses:
    """`with MockResponses(script) as server:` serves on `server.url` (ending in /v1)."""

    def __init__(self, script: Sequence[Turn]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> MockResponses:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def tool_results(self) -> list[str]:
        """The output of each function call the model was sent, call by call, in order."""
        seen: dict[str, str] = {}
        for request in self.requests:
            for item in request.get("input", []):
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    output = item.get("output")
                    text = output if isinstance(output, str) else json.dumps(output)
                    seen.setdefault(str(item.get("call_id")), text)
        return list(seen.values())

    def turn_for(self, request: dict[str, Any]) -> Turn:
        made = sum(
            1
            for item in request.get("input", [])
            if isinstance(item, dict) and item.get("type") == "function_call"
        )
        return self.script[min(made, len(self.script) - 1)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                data = json.dumps({"object": "list", "data": [], "models": []}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with mock._lock:
                    mock.requests.append(body)
                    turn = mock.turn_for(body)
                    number = len(mock.requests)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for data in _events(turn, number):
                    self.wfile.write(
                        f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()
                    )
                self.wfile.flush()
                self.close_connection = True

        return Handler


def _events(turn: Turn, number: int) -> Iterator[dict[str, Any]]:
    response = {"id": f"resp_{number}", "object": "response", "status": "in_progress",
                "output": []}  # fmt: skip
    yield {"type": "response.created", "response": response}
    if isinstance(turn, str):
        item: dict[str, Any] = {"type": "message", "id": f"msg_{number}", "role": "assistant",
                                "status": "completed",
                                "content": [{"type": "output_text", "text": turn,
                                             "annotations": []}]}  # fmt: skip
    else:
        item = {"type": "function_call", "id": f"fc_{number}", "call_id": f"call_{number}",
                "name": turn.name, "arguments": json.dumps(turn.input), "status": "completed"}  # fmt: skip
    yield {"type": "response.output_item.added", "output_index": 0, "item": item}
    yield {"type": "response.output_item.done", "output_index": 0, "item": item}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}  # fmt: skip
    done = response | {"status": "completed", "output": [item], "usage": usage}
    yield {"type": "response.completed", "response": done}
