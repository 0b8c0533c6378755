"""HTTP hooks: the event POSTed to a URL, a 2xx body read back as the hook's stdout.

`post_event` (and `post_event_sync`) send the bytes a process hook would get on stdin
and return a `ProcessResult` with exit 0 and the body as stdout, so every reply format
reads it unchanged. Any other status, a connection error or a body past `OUTPUT_CAP` is
`HttpHookError`; the hook's timeout is `TimeoutError`. What a hook sends where is
`httptarget.HttpTarget`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hookgate.hooks.httptarget import HttpHookError
from hookgate.hooks.process import OUTPUT_CAP, ProcessResult

if TYPE_CHECKING:  # httpx2 costs ~0.1 s to import: only engines with http hooks pay it
    import httpx2

#: Bytes of a refusing response's body quoted in the failure.
_EXCERPT = 300


class HttpPool:
    """One engine's pooled connections: an `AsyncClient` and a `Client`, made on first use.

    Clients ignore the environment's proxies and `.netrc` (`trust_env=False`): an agent
    file names the URL, and credentials of the user's must not follow it there.
    Redirects are not followed: a 3xx is a failure like any other non-2xx.
    """

    def __init__(self) -> None:
        self._async: httpx2.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sync: httpx2.Client | None = None

    def async_client(self) -> httpx2.AsyncClient:
        import httpx2

        loop = asyncio.get_running_loop()
        if self._async is None or self._loop is not loop:
            # A client's connections belong to the loop that opened them; a new loop
            # (asyncio.run per call) needs a client of its own.
            self._async, self._loop = httpx2.AsyncClient(trust_env=False), loop
        return self._async

    def sync_client(self) -> httpx2.Client:
        import httpx2

        if self._sync is None:
            self._sync = httpx2.Client(trust_env=False)
        return self._sync

    async def aclose(self) -> None:
        client, self._async, self._loop = self._async, None, None
        try:
            if client is not None:
                await client.aclose()
        finally:
            self.close()

    def close(self) -> None:
        """Close the blocking client (the async one needs `aclose`, on its loop)."""
        client, self._sync = self._sync, None
        if client is not None:
            client.close()


@dataclass(frozen=True)
class HttpRequest:
    """One event to POST: the bytes, the headers (variables expanded), the bounds."""

    url: str
    body: bytes
    headers: Mapping[str, str]
    timeout: float
    output_cap: int = OUTPUT_CAP


async def post_event(client: httpx2.AsyncClient, request: HttpRequest) -> ProcessResult:
    """POST the event and read the answer, all within the request's timeout."""
    started = time.monotonic()
    received = bytearray()
    with _translated(request.url):
        async with (
            asyncio.timeout(request.timeout),
            client.stream(**_stream_arguments(request)) as response,
        ):
            async for chunk in response.aiter_bytes():
                if not _take(received, chunk, response, request):
                    break
    return _answer(response, bytes(received), request.url, started)


def post_event_sync(client: httpx2.Client, request: HttpRequest) -> ProcessResult:
    """`post_event` for a caller without an event loop.

    Each step (connect, send, every read) is bounded by the timeout, and the deadline
    is checked between reads: a server that trickles its body holds the caller at most
    one read past the deadline.
    """
    started = time.monotonic()
    deadline = started + request.timeout
    received = bytearray()
    with _translated(request.url), client.stream(**_stream_arguments(request)) as response:
        for chunk in response.iter_bytes():
            if not _take(received, chunk, response, request):
                break
            if time.monotonic() > deadline:
                raise TimeoutError
    return _answer(response, bytes(received), request.url, started)


def _stream_arguments(request: HttpRequest) -> dict[str, Any]:
    return {
        "method": "POST",
        "url": request.url,
        "content": request.body,
        "headers": dict(request.headers),
        "timeout": request.timeout,
    }


@contextlib.contextmanager
def _translated(url: str) -> Iterator[None]:
    """httpx2's exceptions as the runner's: a timeout, or the hook's failure."""
    import httpx2

    try:
        yield
    except httpx2.TimeoutException as exc:
        raise TimeoutError from exc
    except httpx2.HTTPError as exc:
        raise HttpHookError(f"POST {url}: {exc or type(exc).__name__}") from exc


def _take(
    received: bytearray, chunk: bytes, response: httpx2.Response, request: HttpRequest
) -> bool:
    """Keep `chunk`; whether to read on. A 2xx body past the cap fails: a cut reply
    cannot be read. Of any other, only the excerpt quoted in the failure is read."""
    if response.is_success:
        if len(received) + len(chunk) > (cap := request.output_cap):
            raise HttpHookError(
                f"POST {request.url}: the response passed the {cap:,}-byte output cap"
            )
        received.extend(chunk)
        return True
    received.extend(chunk[: _EXCERPT - len(received)])
    return len(received) < _EXCERPT


def _answer(response: httpx2.Response, body: bytes, url: str, started: float) -> ProcessResult:
    if not response.is_success:
        text = body.decode("utf-8", "replace").strip()
        detail = f": {text}" if text else ""
        raise HttpHookError(f"POST {url}: HTTP {response.status_code}{detail}")
    return ProcessResult(
        returncode=0,
        stdout=body,
        stderr=b"",
        stdout_truncated=False,
        stderr_truncated=False,
        timed_out=False,
        duration=time.monotonic() - started,
    )
