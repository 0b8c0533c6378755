"""What hookgate's HTTP servers (`hookgate serve`, `hookgate window`) bound before a
request reaches them.

uvicorn keeps every header line a client sends until the head of the request is
complete (with httptools, its C parser, without a limit), and waits for ever for a
connection that sends nothing or sends its head a byte at a time: one unauthenticated
client filled hundreds of megabytes with header lines, or held every file descriptor
with idle sockets, before any token was checked. `bounded_protocol()` is uvicorn's own
HTTP protocol with those bounds: a head of at most `MAX_HEAD` bytes and `MAX_HEADERS`
lines, sent within `HEAD_TIMEOUT` seconds of the connection's first byte (or of its
start), else the connection is refused (400) or closed; and past `max_pending()`
connections awaiting their head, the oldest of them is closed. uvicorn and its parsers are
imported here, when a server starts.
"""

from __future__ import annotations

import asyncio
import resource
from collections import OrderedDict
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # no httptools: uvicorn's `auto` takes h11, and so do we
    HttpToolsProtocol = None  # type: ignore[assignment,misc]

#: Bytes of a request's line and headers at most; browsers send a few KiB.
MAX_HEAD = 64 * 1024
#: Header lines of a request at most.
MAX_HEADERS = 100
#: Seconds a connection has to send a request's head: from its start, and from the
#: first byte of each later request on it (between requests, uvicorn's keep-alive
#: timeout closes an idle one).
HEAD_TIMEOUT = 10.0
#: Connections awaiting their head at most, per process, however many descriptors it
#: may hold (`max_pending`).
MAX_PENDING = 1024


class HeadTooLarge(Exception):
    """A request's head passed `MAX_HEAD` bytes or `MAX_HEADERS` lines."""


def bounded_protocol() -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools' where installed, as uvicorn's `auto` picks,
    else h11's) with the bounds above, for `uvicorn.Config(http=...)`. The classes are
    this module's own, so that uvicorn's worker processes find them by name."""
    return BoundedH11Protocol if HttpToolsProtocol is None else BoundedHttpToolsProtocol


def server_options() -> dict[str, Any]:
    """What `uvicorn.Config` needs besides `http=`: the h11 protocol's own cap on a
    head, and a `backlog` of `max_pending()`: asyncio accepts up to that many connections
    at a time before any of them is set up, and a burst larger than the descriptors
    left would fail them all (EMFILE) before the oldest could be closed."""
    return {"h11_max_incomplete_event_size": MAX_HEAD, "backlog": max_pending()}


def raise_open_files_limit() -> None:
    """Let this process hold as many descriptors as the system lets it (the soft limit
    raised to the hard one): idle connections closed after `HEAD_TIMEOUT` then take far
    longer to exhaust them than a default of 1,024 allowed."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class _HeadClock:
    """The timer of a connection's pending head: armed while a head is awaited. The
    armed ones are kept in order: past `max_pending()`, the oldest is closed, so that a
    client holding sockets open cannot take the descriptors an honest request needs
    (which sends its head at once, and so is never the oldest waiting)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, transport: asyncio.Transport) -> None:
        self._loop = loop
        self._transport = transport
        self._timer: asyncio.TimerHandle | None = None

    def waiting(self, pending: bool) -> None:
        """Arm the timer when a head is pending and it is not armed; else disarm it."""
        if pending and self._timer is None:
            self._timer = self._loop.call_later(HEAD_TIMEOUT, self.close)
            _WAITING[self] = None
            if len(_WAITING) > max_pending():
                next(iter(_WAITING)).close()
        elif not pending:
            self.stop()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        _WAITING.pop(self, None)

    def close(self) -> None:
        """Give up on this connection's head: close it."""
        self.stop()
        if not self._transport.is_closing():
            self._transport.close()


#: The armed clocks of this process, oldest first.
_WAITING: OrderedDict[_HeadClock, None] = OrderedDict()


def max_pending() -> int:
    """Connections awaiting a head at most, per process: a quarter of the descriptors
    this process may hold (at least 16, at most `MAX_PENDING`): the rest stay for the
    requests being answered, their hooks' pipes and their files."""
    return max(16, min(MAX_PENDING, resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 4))


class _Clocked(asyncio.Protocol):
    """What both bounded protocols add to uvicorn's: a `_HeadClock` per connection,
    armed from its start and whenever `_head_pending` says a head is awaited."""

    _clock: _HeadClock
    loop: asyncio.AbstractEventLoop

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        assert isinstance(transport, asyncio.Transport)
        self._clock = _HeadClock(self.loop, transport)
        self._clock.waiting(True)

    def connection_lost(self, exc: Exception | None) -> None:
        self._clock.stop()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._clock.waiting(self._head_pending())

    def _head_pending(self) -> bool:
        raise NotImplementedError


if HttpToolsProtocol is not None:

    class BoundedHttpToolsProtocol(_Clocked, HttpToolsProtocol):
        """httptools keeps every header line; this one stops at the bounds (an
        exception in a callback is the parser's error: uvicorn answers 400, closes)."""

        _head = 0

        def _head_pending(self) -> bool:
            return self.scope is None or "method" not in self.scope

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._head = 0

        def on_url(self, url: bytes) -> None:
            self._count(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count(len(name) + len(value))
            if len(self.headers) >= MAX_HEADERS:
                raise HeadTooLarge(f"more than {MAX_HEADERS} header lines")
            super().on_header(name, value)

        def _count(self, size: int) -> None:
            self._head += size
            if self._head > MAX_HEAD:
                raise HeadTooLarge(f"a request head of more than {MAX_HEAD} bytes")


class BoundedH11Protocol(_Clocked, H11Protocol):
    """h11 caps a head's size itself (`server_options`); this one adds the clock."""

    def _head_pending(self) -> bool:
        return self.conn.their_state is h11.IDLE
