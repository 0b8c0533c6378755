"""An httpx2 transport that reads no response body past a cap.

A client reads a whole body before it hands over any of it (the `openai` SDK does for
every answer, and for every error's body). A server that never ends its body would have
it all held in memory until the timeout, gigabytes on a loopback. `CappedTransport`
wraps another transport, and the body of each response it returns raises `BodyTooLong`
once more than `cap` bytes have arrived. Imported by the clients that use it, never on
a path without HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2

from hookgate.hooks.errors import HookgateError


class BodyTooLong(HookgateError):
    """A response body passed the transport's cap; what was read is dropped."""


class CappedTransport(httpx2.AsyncBaseTransport):
    """`inner`, with every response body cut off past `cap` bytes."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, cap: int) -> None:
        self._inner = inner
        self._cap = cap

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _CappedBody(response.stream, self._cap)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, cap: int) -> None:
        self._inner = inner
        self._cap = cap

    async def __aiter__(self) -> AsyncIterator[bytes]:
        received = 0
        async for chunk in self._inner:
            received += len(chunk)
            if received > self._cap:
                raise BodyTooLong(f"the response passed the {self._cap:,}-byte cap")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()
