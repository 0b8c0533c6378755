"""A scripted model server on loopback, the base of each agent's mock API: it plays a
script of turns (tool calls, then a final answer) and keeps every request it was sent.

The turn a request gets is the number of tool calls already in its conversation, so
an agent's retries and side requests do not move the script on. Subclasses say how
calls are counted and how a turn is written in their API.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple


class ToolUse(NamedTuple):
    """A turn that calls the tool `name` (as the agent offers it) with `input`."""

    name: str
    input: dict[str, Any]


Turn = ToolUse | str
"""A tool call, or the final answer's text."""


class ScriptedServer:
    """`with Server(script) as server:` serves on `server.url` until the block ends."""

    #: What `url` adds to the server's address (an API's version prefix).
    url_suffix = ""

    def __init__(self, script: Sequence[Turn]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.url_suffix}"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def turn_for(self, request: dict[str, Any]) -> Turn:
        return self.script[min(self.calls_made(request), len(self.script) - 1)]

    def calls_made(self, request: dict[str, Any]) -> int:
        """How many tool calls the conversation in `request` already holds."""
        raise NotImplementedError

    def answer(self, handler: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        """Answer the POST of `body` to `path` (recorded already) through `handler`."""
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                send_json(self, {"object": "list", "data": [], "models": []})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with mock._lock:
                    mock.requests.append(body)
                mock.answer(self, self.path.split("?")[0], body)

        return Handler


def send_json(handler: BaseHTTPRequestHandler, value: Any) -> None:
    data = json.dumps(value).encode()
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def send_events(handler: BaseHTTPRequestHandler, events: Iterable[tuple[str | None, Any]]) -> None:
    """Server-sent events, each `(event name or None, data)`, then the connection ends."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.end_headers()
    for kind, data in events:
        named = f"event: {kind}\n" if kind else ""
        handler.wfile.write(f"{named}data: {json.dumps(data)}\n\n".encode())
    handler.wfile.flush()
    handler.close_connection = True
