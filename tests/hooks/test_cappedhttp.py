"""CappedTransport: no response body is read past the cap, an error's body included."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx2
import pytest

from hookgate.hooks.cappedhttp import BodyTooLong, CappedTransport

CAP = 1000


def fetch(status: int, body: bytes) -> httpx2.Response:
    """GET through a capped transport over a server answering `status` with `body`,
    sent in 100-byte chunks as a server streams it."""

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 100):
            yield body[start : start + 100]

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, content=chunks())

    async def get() -> httpx2.Response:
        transport = CappedTransport(httpx2.MockTransport(answer), CAP)
        async with httpx2.AsyncClient(transport=transport) as client:
            return await client.get("http://checker.test/v1/chat/completions")

    return asyncio.run(get())


@pytest.mark.parametrize("status", [200, 500])
def test_a_body_at_the_cap_is_read_whole(status: int) -> None:
    response = fetch(status, b"x" * CAP)
    assert (response.status_code, response.content) == (status, b"x" * CAP)


@pytest.mark.parametrize("status", [200, 500])
def test_a_body_past_the_cap_raises_and_is_not_kept(status: int) -> None:
    with pytest.raises(BodyTooLong, match=f"the response passed the {CAP:,}-byte cap"):
        fetch(status, b"x" * (CAP + 1))
