"""What went wrong with a connection, in the user's words.

One wording for every hook that talks to a server (http hooks, guardrail checkers):
the exceptions of httpx2, httpcore2, anyio and the socket layer, whose own text is
often empty ("") or a library's ("All connection attempts failed"), become what
happened: refused, reset, closed without an answer, a name not resolved.
"""

from __future__ import annotations

import errno
import socket
import ssl
from collections.abc import Iterator

#: What an errno of the connection says.
_ERRNO_WORDS = {
    errno.ECONNREFUSED: "connection refused: nothing listens there",
    errno.ECONNRESET: "the server reset the connection",
    errno.ECONNABORTED: "the connection was aborted",
    errno.EPIPE: "the server closed the connection while the request was sent",
    errno.ETIMEDOUT: "the connection timed out",
    errno.EHOSTUNREACH: "the host cannot be reached",
    errno.ENETUNREACH: "the network cannot be reached",
    errno.EMFILE: "too many open files here to open a connection",
}
#: httpcore's words for a server that closed the connection before its answer.
_HUNG_UP = "Server disconnected without sending a response"


def connection_failure(exc: BaseException) -> str:
    """What `exc` (raised while a request was sent or its answer read) says happened."""
    for cause in _causes(exc):
        if isinstance(cause, socket.gaierror):
            return f"the host name could not be resolved ({cause.strerror or cause})"
        if isinstance(cause, ssl.SSLError):
            return f"the TLS handshake failed ({cause.reason or cause})"
        if isinstance(cause, OSError) and cause.errno in _ERRNO_WORDS:
            return _ERRNO_WORDS[cause.errno]
        if _HUNG_UP in str(cause):
            return "the server closed the connection without answering"
    for cause in _causes(exc):
        if str(cause):
            return f"the connection failed: {cause}"
    return f"the connection failed ({type(exc).__name__}, no detail given)"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it was raised from, or during, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
