"""HTTP hooks: the event POSTed to a URL, a 2xx body read back as the hook's stdout.

`post_event` (and `HttpPool.post_sync`) send the bytes a process hook would get on stdin
and return a `ProcessResult` with exit 0 and the body as stdout, so every reply format
reads it unchanged. Any other status, a connection error or a body past `OUTPUT_CAP` is
`HttpHookError`; the hook's timeout is `TimeoutError`. What a hook sends where is
`httptarget.HttpTarget`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hookgate.hooks.kinds.http.target import HttpHookError
from hookgate.hooks.kinds.neterrors import connection_failure
from hookgate.hooks.process import OUTPUT_CAP, ProcessResult

if TYPE_CHECKING:  # httpx2 costs ~0.1 s to import: only engines with http hooks pay it
    import asyncio  # and asyncio ~25 ms: a synchronous `hooks fire` need not

    import httpx2

#: Bytes of a refusing response's body quoted in the failure.
_EXCERPT = 300


class HttpPool:
    """One engine's pooled connections: an `AsyncClient` per event loop, made on first use.

    `post_sync` sends on a loop of the pool's own, in a background thread, so that the
    timeout bounds the whole exchange as exactly as under `run`: a blocking client
    bounds each read alone, and a server that trickles its headers a byte at a time
    never passes a read timeout. Clients ignore the environment's proxies and `.netrc`
    (`trust_env=False`): an agent file names the URL, and the user's credentials must
    not follow it there. Redirects are not followed: a 3xx fails like any non-2xx.
    """

    def __init__(self) -> None:
        # A client's connections belong to the loop that opened them.
        self._clients: dict[asyncio.AbstractEventLoop, httpx2.AsyncClient] = {}
        self._background: tuple[asyncio.AbstractEventLoop, threading.Thread] | None = None
        self._lock = threading.Lock()

    def async_client(self) -> httpx2.AsyncClient:
        """The client of the running event loop."""
        import asyncio

        import httpx2

        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = httpx2.AsyncClient(trust_env=False)
        return client

    def post_sync(self, request: HttpRequest) -> ProcessResult:
        """`post_event` for a caller without an event loop; its thread waits."""
        import asyncio

        async def post() -> ProcessResult:
            return await post_event(self.async_client(), request)

        future = asyncio.run_coroutine_threadsafe(post(), self._background_loop())
        try:
            return future.result()
        except BaseException:  # KeyboardInterrupt: the request stops with the caller
            future.cancel()
            raise

    async def aclose(self) -> None:
        """Close the running loop's client, and the background loop's (`close`)."""
        import asyncio

        client = self._clients.pop(asyncio.get_running_loop(), None)
        try:
            if client is not None:
                await client.aclose()
        finally:
            self.close()

    def close(self) -> None:
        """Close the connections `post_sync` opened and stop its thread."""
        with self._lock:
            background, self._background = self._background, None
        if background is None:
            return
        import asyncio

        loop, thread = background
        client = self._clients.pop(loop, None)
        if client is not None:
            asyncio.run_coroutine_threadsafe(client.aclose(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        import asyncio

        with self._lock:
            if self._background is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="hookgate-http-hooks", daemon=True
                )
                thread.start()
                self._background = (loop, thread)
            return self._background[0]


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
    import asyncio

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
    except httpx2.TransportError as exc:
        raise HttpHookError(f"POST {url}: {connection_failure(exc)}") from exc
    except httpx2.HTTPError as exc:
        raise HttpHookError(f"POST {url}: {exc or connection_failure(exc)}") from exc


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
