"""A real HTTP server on loopback that answers http hooks from a script, for tests.

`HookServer` listens on 127.0.0.1 (ephemeral port) in a thread, records every POST
(path, lower-case headers, raw body) and answers each from a queue of `Answer`s; an
empty queue answers 200 with an empty body (allow). An answer may stall: the server
then stays silent until it is closed, which is what a hook's timeout must cut short.

    with HookServer() as server:
        server.queue(Answer(500, b"boom"))
        ...  # a hook with http: {url: server.url}
        assert server.requests[0].json()["event"] == "preToolCall"
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any

from support.quiet_server import QuietHTTPServer

# How often the serving loop checks for close(); close() waits up to this long.
SHUTDOWN_POLL_S = 0.02
# A stalled answer stays silent this long unless the server closes first.
STALL_S = 30.0
# Seconds between the bytes of a trickled header: each read gets something in time.
TRICKLE_S = 0.05


@dataclass(frozen=True)
class Answer:
    """One scripted response: a status and a body, or silence until the server closes."""

    status: int = 200
    body: bytes = b""
    stall: bool = False
    trickle: bool = False
    """Send the status line, then one byte of a header every `TRICKLE_S`, never ending."""
    reset: bool = False
    """Read the request, then reset the connection (TCP RST) without a word."""
    hang_up: bool = False
    """Read the request, then close the connection without a word."""

    @classmethod
    def reply(cls, reply: Mapping[str, Any]) -> Answer:
        """200 with `reply` as its JSON body."""
        return cls(200, json.dumps(reply).encode())


@dataclass(frozen=True)
class Posted:
    """One request the server received."""

    path: str
    headers: Mapping[str, str]
    body: bytes
    client_port: int
    """The client's port: requests on one pooled connection share it."""

    def json(self) -> Any:
        return json.loads(self.body)


class HookServer:
    """The loopback server; use it as a context manager."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: deque[Answer] = deque()
        self._requests: list[Posted] = []
        self.closing = threading.Event()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": SHUTDOWN_POLL_S},
            name="hook-server",
            daemon=True,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/hook"

    def queue(self, *answers: Answer) -> None:
        with self._lock:
            self._answers.extend(answers)

    @property
    def requests(self) -> list[Posted]:
        with self._lock:
            return list(self._requests)

    def _next(self, request: Posted) -> Answer:
        with self._lock:
            self._requests.append(request)
            return self._answers.popleft() if self._answers else Answer()

    def __enter__(self) -> HookServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


def refused_url() -> str:
    """A loopback URL nothing listens on: connecting to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


class _HTTPServer(QuietHTTPServer):
    def __init__(self, owner: HookServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"  # keep-alive: the client's pool reuses connections

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        headers = {key.lower(): value for key, value in self.headers.items()}
        posted = Posted(self.path, headers, body, self.client_address[1])
        answer = self.server.owner._next(posted)
        if answer.reset or answer.hang_up:
            self.close_connection = True
            if answer.reset:  # a zero linger time: close(2) sends RST, not FIN
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
            self.connection.close()
            return
        if answer.stall or answer.trickle:
            self.close_connection = True
            if answer.trickle:
                self._trickle()
            else:
                self.server.owner.closing.wait(STALL_S)
            return
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)

    def _trickle(self) -> None:
        self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        self.wfile.flush()
        deadline = time.monotonic() + STALL_S
        while not self.server.owner.closing.wait(TRICKLE_S) and time.monotonic() < deadline:
            try:
                self.wfile.write(b"a")
                self.wfile.flush()
            except OSError:  # the client gave up
                return

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean
