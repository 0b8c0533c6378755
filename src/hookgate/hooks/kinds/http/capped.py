"""Response bodies read to a cap, for httpx2 clients: `cap_bodies` makes the event hook.

A client reads a whole body before it hands any of it over (the `openai` SDK does for
every answer it parses, and for every error's body). A server that never ends its body
has it held in memory until the timeout, gigabytes on a loopback. The hook wraps each
response's body, before anything reads it, so that reading raises `BodyTooLong` once
more than `cap` bytes have arrived. An event hook rather than a transport: it holds for
every transport the client picks, a proxy's too. Imported by the clients that use it,
never on a path without HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import httpx2

from hookgate.hooks.errors import HookgateError


class BodyTooLong(HookgateError):
    """A response body passed its cap; what was read is dropped. Completes a sentence
    whose subject is the server."""


def cap_bodies(
    cap: int, *, errors_only: bool = False
) -> Callable[[httpx2.Response], Awaitable[None]]:
    """A response event hook (`event_hooks={"response": [...]}`) that stops each body
    past `cap` bytes; with `errors_only`, a success's body is left as it is (a stream
    that its reader bounds itself)."""

    async def cap_body(response: httpx2.Response) -> None:
        if errors_only and response.is_success:
            return
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _CappedBody(response.stream, cap, response.status_code)

    return cap_body


class _CappedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, cap: int, status: int) -> None:
        self._inner = inner
        self._cap = cap
        self._status = status

    async def __aiter__(self) -> AsyncIterator[bytes]:
        received = 0
        async for chunk in self._inner:
            received += len(chunk)
            if received > self._cap:
                raise BodyTooLong(
                    f"sent an HTTP {self._status} response past the {self._cap:,}-byte cap"
                )
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()
