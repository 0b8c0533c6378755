"""ACP's JSON lines, checked before the SDK sees them: no line can end `hookgate acp`.

`GuardedNdjson` is the SDK's message transport for stdio. A line that is not a
JSON-RPC 2.0 request, notification or response (unparsable text, `[]`, `42`, `null`,
a batch, a request without a method) is answered with the JSON-RPC error reply, id
null where it has none, and the next line is read. The SDK's own reader (0.12) dies
on such a line or takes `null` for the end of input; docs/upstream/acp-reader.patch
is the fix offered upstream.

`open_stdio` gives the protocol its streams over whatever stdin and stdout are: pipes
and sockets (an editor's) are watched by the event loop; a regular file or /dev/null,
which epoll refuses, is copied through a pipe by a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import selectors
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from acp import RequestError

from hookgate.frontends.terminal import notice_line

#: Characters of a refused line quoted in the notice on stderr.
QUOTED = 80
#: Seconds a clean exit waits for the answers still being copied into a file.
DRAIN_WAIT = 5.0

Message = dict[str, Any]


@dataclass
class Stdio:
    """The protocol's two streams, the thread copying answers where epoll cannot, and
    `lost`: done, with the error, once stdout cannot be written (the editor closed it,
    or a write failed), which the protocol may not notice until much later, or ever."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    answers_copier: threading.Thread | None
    lost: asyncio.Future[OSError]

    def output_lost(self, exc: OSError) -> None:
        """Record that stdout failed with `exc` (the first failure is the one said)."""
        if not self.lost.done():
            self.lost.set_result(exc)

    async def close(self) -> None:
        """Close the writer; wait until what was written has reached stdout."""
        protocol = self.writer.transport.get_protocol()
        if isinstance(protocol, _WatchedOutput):
            protocol.closing = True
        self.writer.close()
        await asyncio.sleep(0)  # the transport closes its pipe on the next iteration
        if self.answers_copier is not None:
            self.answers_copier.join(DRAIN_WAIT)
            await asyncio.sleep(0)  # a failure it met reaches `lost` (call_soon_threadsafe)


async def open_stdio(rpc_in: int, rpc_out: int, limit: int) -> Stdio:
    """Streams over the fds `rpc_in` and `rpc_out` (both ours), whatever files they are."""
    loop = asyncio.get_running_loop()
    lost: asyncio.Future[OSError] = loop.create_future()

    def output_lost(exc: OSError) -> None:
        if not lost.done():
            lost.set_result(exc)

    if not _watchable(rpc_in, selectors.EVENT_READ):
        pipe_out, pipe_in = os.pipe()
        _start_copier("acp-stdin", rpc_in, pipe_in, closes=(pipe_in,))
        rpc_in = pipe_out
    answers_copier = None
    if not _watchable(rpc_out, selectors.EVENT_WRITE):
        pipe_out, pipe_in = os.pipe()
        answers_copier = _start_copier(
            "acp-stdout", pipe_out, rpc_out, closes=(pipe_out, rpc_out),
            on_error=lambda exc: loop.call_soon_threadsafe(output_lost, exc),
        )  # fmt: skip
        rpc_out = pipe_in
    reader = asyncio.StreamReader(limit=limit)
    source = os.fdopen(rpc_in, "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    sink = os.fdopen(rpc_out, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(lambda: _WatchedOutput(output_lost), sink)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return Stdio(reader, writer, answers_copier, lost)


class _WatchedOutput(asyncio.streams.FlowControlMixin):
    """The write pipe's protocol: asyncio sees the reader of a pipe leave (the editor
    closed its end) even while nothing is written, and calls `connection_lost`."""

    def __init__(self, on_lost: Callable[[OSError], None]) -> None:
        super().__init__()
        self._on_lost = on_lost
        self.closing = False
        """Set by our own close: the end of the writer is then no loss."""

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self.closing:
            self._on_lost(
                exc
                if isinstance(exc, OSError)
                else BrokenPipeError(errno.EPIPE, "the reader of stdout closed it")
            )


def _watchable(fd: int, events: int) -> bool:
    """Whether the event loop can watch `fd` (epoll refuses regular files, /dev/null)."""
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(fd, events)
        except (OSError, ValueError):
            return False
    return True


def _start_copier(
    name: str,
    source: int,
    sink: int,
    closes: tuple[int, ...],
    on_error: Callable[[OSError], object] | None = None,
) -> threading.Thread:
    copier = threading.Thread(
        target=_copy, args=(source, sink, closes, on_error), name=name, daemon=True
    )
    copier.start()
    return copier


def _copy(
    source: int, sink: int, closes: tuple[int, ...], on_error: Callable[[OSError], object] | None
) -> None:
    """Copy `source` to `sink` until the end of either; then close `closes`. A write
    that fails is told to `on_error` (stdout: the protocol's answers go nowhere)."""
    try:
        while chunk := os.read(source, 65536):
            view = memoryview(chunk)
            while view:
                try:
                    view = view[os.write(sink, view) :]
                except OSError as exc:
                    if on_error is not None:
                        on_error(exc)
                    return
    except OSError:
        pass  # the other side is gone, and with it what there was to copy
    finally:
        for fd in closes:
            with contextlib.suppress(OSError):
                os.close(fd)


class GuardedNdjson:
    """An `acp` Transport over stdio that answers malformed lines itself."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_lost: Callable[[OSError], None] | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._sending = asyncio.Lock()
        self._on_lost = on_lost

    async def send(self, message: Message) -> None:
        """Write one message; a stdout that fails is told to `on_lost` (which ends the
        serving), and the message dropped: the SDK would print a traceback per message."""
        data = json.dumps(message, separators=(",", ":")) + "\n"
        async with self._sending:  # one message, one whole line
            try:
                self._writer.write(data.encode())
                await self._writer.drain()
            except OSError as exc:
                if self._on_lost is None:
                    raise
                self._on_lost(exc)

    async def receive(self) -> Message | None:
        """The next well-formed message; None at the end of input."""
        while True:
            line = await self._read_line()
            if not line:
                return None
            if not line.strip():
                continue
            checked = checked_message(line)
            if isinstance(checked, Refusal):
                notice_line(f"refused an ACP line ({checked.reason}): {_quoted(line)}")
                await self.send(checked.reply())
            elif checked is not None:
                return checked

    async def close(self) -> None:
        """The writer is the front end's to close."""

    async def _read_line(self) -> bytes:
        """One line, however long (the SDK reads the same way); b"" at the end."""
        chunks: list[bytes] = []
        try:
            while True:
                try:
                    chunks.append(await self._reader.readuntil(b"\n"))
                    return b"".join(chunks)
                except asyncio.LimitOverrunError as exc:
                    chunks.append(await self._reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
            return b"".join(chunks)


@dataclass(frozen=True)
class Refusal:
    """A line that is not a well-formed message, and the error that answers it."""

    error: RequestError
    reason: str
    ident: Any = None
    """The id of the request refused; null where the line has none (or a bad one)."""

    def reply(self) -> Message:
        return {"jsonrpc": "2.0", "id": self.ident, "error": self.error.to_error_obj()}


def checked_message(line: bytes) -> Message | Refusal | None:
    """The message on `line`, the refusal that answers it, or None: drop it unanswered."""
    try:
        value = json.loads(line)
    except ValueError as exc:  # invalid UTF-8 too: UnicodeDecodeError is a ValueError
        return Refusal(RequestError.parse_error({"details": str(exc)}), "not JSON")
    if not isinstance(value, dict):
        return _invalid(f"{_kind(value)} is not a JSON-RPC message; send one object per line")
    ident = value.get("id")
    if "id" in value and not _valid_id(ident):
        return _invalid("the id must be a string, an integer or null")
    if "method" in value:
        return (
            value
            if isinstance(value["method"], str)
            else _invalid("a method that is not a string", ident)
        )
    if "id" not in value or ("result" not in value and "error" not in value):
        return _invalid("a request without a method", ident)
    if "error" in value and not isinstance(value["error"], dict):
        notice_line(f"dropped a response to request {ident!r}: its error is not an object")
        return None
    return value


def _invalid(reason: str, ident: Any = None) -> Refusal:
    return Refusal(RequestError.invalid_request({"details": reason}), reason, ident)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a batch"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return "a string" if isinstance(value, str) else "a number"


def _valid_id(ident: Any) -> bool:
    return ident is None or isinstance(ident, str) or (type(ident) is int)


def _quoted(line: bytes) -> str:
    text = line.strip().decode(errors="replace")
    return repr(text if len(text) <= QUOTED else text[: QUOTED - 1] + "…")
