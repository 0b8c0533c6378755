"""A real OpenAI-compatible chat-completions server on loopback, for tests.

`ChatServer` listens on 127.0.0.1 (ephemeral port) in a thread and answers
`POST /v1/chat/completions` from a queue of `ServedReply`s, as SSE when the request
says `stream: true` and as one JSON object otherwise. It records every request, and a
reply can inject a fault: an HTTP error status, a dropped, stalled or early-ended
stream, or malformed tool-call arguments (pass `arguments` as a raw string).

    with ChatServer() as server:
        server.queue(ServedReply(text="hello"), ServedReply.http_error(500, "boom"))
        ...  # point a client at server.url
        assert "what I asked" in server.sent_text()
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any, Literal

from support.quiet_server import QuietHTTPServer

Fault = Literal[
    "hang",
    "drop",
    "stall",
    "end",
    "error_event",
    "error_field",
    "error_named",
    "error_json",
    "error_json_close",
    "garbage",
    "trickle",
    "keepalive",
    "huge_line",
    "flood",
]
"""hang: never send even the status line; drop: close the TCP connection mid-stream;
stall: go silent mid-stream; end: finish the body cleanly, but without a finish reason
or `[DONE]`; error_event: send `data: {"error": {"message": error_body}}` and end, as
vLLM does; error_field: send `error: {"code": 500, "message": error_body}` and end, as
llama.cpp's server does; error_named: send `event: error` with `data: {"message":
error_body}` and end; error_json: write `{"error": {"message": error_body}}` as a bare
JSON body, no SSE framing, and end, as a Python server whose handler fails mid-stream
does; error_json_close: the same, then close the connection without ending the body; garbage: send an event that is not JSON; trickle: send the whole stream one
byte every `trickle_s`; keepalive: send an SSE comment every `trickle_s`, forever;
huge_line: send one `data:` line of `huge_bytes` bytes; flood: send well-formed text
deltas of `huge_bytes` in all, as fast as the client reads them, 64 KiB each, without
end (`huge_bytes` past what any reply may hold). Without `stream: true`, or with an
error status, flood sends a JSON body whose string runs on for `huge_bytes`; drop
and stall strike before the status line and the rest do nothing."""

CHAT_PATH = "/v1/chat/completions"
# An idle keep-alive connection's handler thread gives up after this many seconds.
IDLE_CONNECTION_S = 10.0
# How often the serving loop checks for close(); close() waits up to this long.
SHUTDOWN_POLL_S = 0.02
# A stalled stream stays silent this long unless the server closes first.
DEFAULT_STALL_S = 30.0
# `fault_after` for a fault that strikes once every event, `[DONE]` too, is sent.
AFTER_DONE = -1


@dataclass(frozen=True)
class ServedToolCall:
    """A tool call the server sends; a `str` `arguments` is sent verbatim, even if not JSON."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None  # None: "call_<n>", numbered across the server's life


@dataclass(frozen=True)
class ServedReply:
    """One scripted response: text and/or tool calls, or an HTTP error, plus an optional fault."""

    text: str = ""
    tool_calls: Sequence[ServedToolCall] = ()
    status: int = 200
    error_body: str = ""  # the body sent with a non-200 status, or the error_event message
    fault: Fault | None = None
    fault_after: int = 1  # SSE events sent before the fault strikes; AFTER_DONE: all
    stall_s: float = DEFAULT_STALL_S  # how long "hang" and "stall" stay silent
    pieces: int = 3  # the text and each call's arguments are streamed in this many deltas
    raw_events: Sequence[bytes] = ()  # sent verbatim as the stream's events, if any
    trickle_s: float = 0.05  # the pace of "trickle" (per byte) and "keepalive" (per comment)
    huge_bytes: int = 64 * 1024 * 1024  # the length of the "huge_line" line
    interleave: bool = False  # interleave the deltas of several tool calls
    repeat_name: bool = False  # name the call in every delta, as llama.cpp's server does
    raw_body: str | None = None  # sent verbatim with status 200 and `content_type`, if set
    content_type: str = "text/html; charset=utf-8"

    @classmethod
    def http_error(cls, status: int, body: str) -> ServedReply:
        """Answer with `status` and `body` (sent as JSON if it parses, else as text)."""
        return cls(status=status, error_body=body)

    @classmethod
    def raw(cls, body: str, content_type: str) -> ServedReply:
        """Answer 200 with `body` as `content_type`, whatever the request asked for."""
        return cls(raw_body=body, content_type=content_type)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received; header names are lower-case, `body` is the decoded
    JSON ({} if it was not a JSON object)."""

    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    client_port: int = 0
    """The client's end of the connection: one port for requests on one connection."""


class ChatServer:
    """The loopback server; use it as a context manager or call `start()`/`close()`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._replies: deque[ServedReply] = deque()
        self._requests: list[RecordedRequest] = []
        self._call_ids = itertools.count(1)
        self.context_chars: int | None = None
        """A chat request whose messages hold more characters of content than this is
        refused (400, `context_length_exceeded`, as OpenAI answers), and consumes no
        reply: a model with a smaller context than the client's budget."""
        self.closing = threading.Event()  # wakes stalled streams on close
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": SHUTDOWN_POLL_S},
            name="chat-server",
            daemon=True,
        )

    @property
    def url(self) -> str:
        """The base URL to give an OpenAI client, e.g. `http://127.0.0.1:41234/v1`."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def queue(self, *replies: ServedReply) -> None:
        """Append replies; each request consumes the oldest one."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def remaining(self) -> int:
        """How many queued replies no request has consumed yet."""
        with self._lock:
            return len(self._replies)

    def sent_text(self) -> str:
        """All request bodies as JSON text, one per line, for substring checks."""
        return "\n".join(json.dumps(request.body) for request in self.requests)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> ChatServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def take(self, request: RecordedRequest) -> ServedReply | None:
        """Record `request`; pop the reply for a chat request (None: queue empty, or no chat)."""
        with self._lock:
            self._requests.append(request)
            if request.path != CHAT_PATH or not self._replies:
                return None
            return self._replies.popleft()

    def over_context(self, request: RecordedRequest) -> bool:
        """Record `request` and say so, if it is a chat request past `context_chars`."""
        messages = request.body.get("messages")
        if self.context_chars is None or not isinstance(messages, list):
            return False
        size = sum(len(str(m.get("content") or "")) for m in messages if isinstance(m, dict))
        if size <= self.context_chars:
            return False
        with self._lock:
            self._requests.append(request)
        return True

    def next_call_id(self) -> str:
        with self._lock:
            return f"call_{next(self._call_ids)}"


class _HTTPServer(QuietHTTPServer):
    block_on_close = False  # a stalled or idle handler must not hold up close()

    def __init__(self, chat: ChatServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.chat = chat


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streams, like real servers
    # Real servers (uvicorn, Go) set TCP_NODELAY; without it each stream's last small write
    # waits ~40 ms for the client's delayed ACK.
    disable_nagle_algorithm = True
    timeout = IDLE_CONNECTION_S
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: test output is for test failures."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        chat = self.server.chat
        headers = _lower_keys(self.headers.items())
        request = RecordedRequest(self.path, headers, body, self.client_address[1])
        if chat.over_context(request):
            message = f"This model's maximum context length is {chat.context_chars} characters"
            error = {"message": message, "type": "invalid_request_error"}
            self._send_body(
                400, json.dumps({"error": {**error, "code": "context_length_exceeded"}})
            )
            return
        reply = chat.take(request)
        if self.path != CHAT_PATH:
            self._send_body(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
        elif reply is None:
            message = "chat_server: no queued reply left"
            self._send_body(500, json.dumps({"error": {"message": message}}))
        elif reply.raw_body is not None:
            self._send_raw(reply.raw_body.encode(), reply.content_type)
        elif reply.fault == "hang":
            chat.closing.wait(reply.stall_s)
            self._drop()
        elif reply.status != 200 and reply.fault == "flood":
            self._send_endless_body(reply.status, b'{"error": {"message": "', reply.huge_bytes)
        elif reply.status != 200:
            self._send_body(reply.status, reply.error_body)
        else:
            calls = [_wire_tool_call(call, chat) for call in reply.tool_calls]
            model = str(body.get("model", "scripted"))
            if body.get("stream"):
                self._send_stream(reply, calls, model)
            else:
                self._send_completion(reply, calls, model)

    def _send_raw(self, data: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_body(self, status: int, text: str) -> None:
        data = text.encode()
        try:
            json.loads(text)
            content_type = "application/json"
        except ValueError:
            content_type = "text/plain; charset=utf-8"
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_completion(self, reply: ServedReply, calls: list[_WireCall], model: str) -> None:
        if reply.fault == "stall":
            self.server.chat.closing.wait(reply.stall_s)
        if reply.fault in ("drop", "stall"):
            self._drop()
            return
        if reply.fault == "flood":
            self._send_endless_body(
                200, b'{"choices": [{"index": 0, "message": {"content": "', reply.huge_bytes
            )
            return
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if calls:
            message["tool_calls"] = [call.whole() for call in calls]
        choice = {"index": 0, "message": message, "finish_reason": _finish_reason(calls)}
        completion = {**_envelope(model, "chat.completion"), "choices": [choice]}
        self._send_body(200, json.dumps(completion))

    def _send_stream(self, reply: ServedReply, calls: list[_WireCall], model: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [json.dumps(chunk) for chunk in _stream_chunks(reply, calls, model)]
        wire = [f"data: {event}\n\n".encode() for event in [*events, "[DONE]"]]
        if reply.raw_events:
            wire = [*reply.raw_events, b"data: [DONE]\n\n"]
        if reply.fault == "trickle":
            wire = [bytes([byte]) for byte in b"".join(wire)]
        with contextlib.suppress(OSError):  # the client hung up: that is what it should do
            for sent, data in enumerate(wire):
                if reply.fault not in (None, "trickle") and sent == reply.fault_after:
                    self._strike(reply)
                    return
                if reply.fault == "trickle" and self.server.chat.closing.wait(reply.trickle_s):
                    return
                self._write_chunk(data)
            if reply.fault is not None and reply.fault_after == AFTER_DONE:
                self._strike(reply)  # [DONE] was sent, the body is never ended
                return
            self._write_chunk(b"")

    def _strike(self, reply: ServedReply) -> None:
        """Send the fault in place of the rest of the stream."""
        if reply.fault == "error_event":
            error = {"error": {"message": reply.error_body, "type": "server_error"}}
            self._write_chunk(f"data: {json.dumps(error)}\n\n".encode())
        elif reply.fault == "error_field":
            error = {"code": 500, "message": reply.error_body, "type": "server_error"}
            self._write_chunk(f"error: {json.dumps(error)}\n\n".encode())
        elif reply.fault == "error_named":
            error = {"message": reply.error_body}
            self._write_chunk(f"event: error\ndata: {json.dumps(error)}\n\n".encode())
        elif reply.fault in ("error_json", "error_json_close"):
            error = {"error": {"message": reply.error_body, "type": "internal_server_error"}}
            self._write_chunk(json.dumps(error).encode())
        elif reply.fault == "garbage":
            self._write_chunk(b"data: this is not json\n\n")
        elif reply.fault == "stall":
            self.server.chat.closing.wait(reply.stall_s)
        elif reply.fault == "keepalive":
            while not self.server.chat.closing.wait(reply.trickle_s):
                self._write_chunk(b": keep-alive\n\n")
        elif reply.fault == "huge_line":
            self._send_huge_line(reply.huge_bytes)
        elif reply.fault == "flood":
            self._send_flood(reply.huge_bytes)
        if reply.fault in ("drop", "stall", "error_json_close"):
            self._drop()
        else:
            self._write_chunk(b"")  # a clean end of the body, but no finish reason or [DONE]

    def _send_endless_body(self, status: int, start: bytes, size: int) -> None:
        """A JSON body that opens with `start` and whose string runs on for `size` bytes,
        a MiB a chunk, unless the client hangs up first."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        block = b"x" * 1024 * 1024
        with contextlib.suppress(OSError):  # the client hung up: that is what it should do
            self._write_chunk(start)
            for _ in range(size // len(block)):
                if self.server.chat.closing.is_set():
                    return
                self._write_chunk(block)

    def _send_flood(self, size: int) -> None:
        """Text deltas of 64 KiB each, `size` bytes of text in all, unless the client
        hangs up first."""
        delta = {"choices": [{"index": 0, "delta": {"content": "flood " * 10923}}]}
        event = f"data: {json.dumps(delta)}\n\n".encode()
        for _ in range(size // (6 * 10923)):
            if self.server.chat.closing.is_set():
                return
            self._write_chunk(event)

    def _send_huge_line(self, size: int) -> None:
        """One `data:` line of `size` bytes, a MiB at a time, until the client hangs up."""
        self._write_chunk(b'data: "')
        block = b"x" * min(size, 1024 * 1024)
        for _ in range(size // len(block)):
            if self.server.chat.closing.is_set():
                return
            self._write_chunk(block)
        self._write_chunk(b'"\n\n')

    def _write_chunk(self, data: bytes) -> None:
        """One HTTP/1.1 chunk; an empty one ends the body."""
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):  # the client may have hung up first
            self.connection.shutdown(socket.SHUT_RDWR)


@dataclass(frozen=True)
class _WireCall:
    id: str
    name: str
    arguments: str

    def whole(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": self.arguments}
        return {"id": self.id, "type": "function", "function": function}

    def deltas(self, index: int, pieces: int, *, repeat_name: bool) -> list[dict[str, Any]]:
        """The first delta names the call; the arguments follow in `pieces` parts, each
        naming the call again if `repeat_name`."""
        first = {**self.whole(), "index": index, "function": {"name": self.name, "arguments": ""}}
        named = {"name": self.name} if repeat_name else {}
        rest = [
            {"index": index, "function": {**named, "arguments": part}}
            for part in _split(self.arguments, pieces)
        ]
        return [first, *rest]


def _wire_tool_call(call: ServedToolCall, chat: ChatServer) -> _WireCall:
    arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
    return _WireCall(id=call.id or chat.next_call_id(), name=call.name, arguments=arguments)


def _stream_chunks(reply: ServedReply, calls: list[_WireCall], model: str) -> list[dict[str, Any]]:
    chunks = [_chunk(model, {"role": "assistant", "content": ""})]
    chunks += [_chunk(model, {"content": part}) for part in _split(reply.text, reply.pieces)]
    per_call = [
        call.deltas(index, reply.pieces, repeat_name=reply.repeat_name)
        for index, call in enumerate(calls)
    ]
    if reply.interleave:
        ordered = [d for group in itertools.zip_longest(*per_call) for d in group if d is not None]
    else:
        ordered = [delta for deltas in per_call for delta in deltas]
    chunks += [_chunk(model, {"tool_calls": [delta]}) for delta in ordered]
    chunks.append(_chunk(model, {}, finish_reason=_finish_reason(calls)))
    return chunks


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return {**_envelope(model, "chat.completion.chunk"), "choices": [choice]}


def _envelope(model: str, kind: str) -> dict[str, Any]:
    return {"id": "chatcmpl-test", "object": kind, "created": 0, "model": model}


def _finish_reason(calls: Sequence[_WireCall]) -> str:
    return "tool_calls" if calls else "stop"


def _split(text: str, pieces: int) -> Iterator[str]:
    """`text` in up to `pieces` consecutive non-empty parts."""
    size = max(1, -(-len(text) // max(1, pieces)))
    return (text[start : start + size] for start in range(0, len(text), size))


def _lower_keys(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers}
