"""cap_bodies: no response body is read past the cap, an error's body included."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx2
import pytest

from hookgate.hooks.kinds.http.capped import BodyTooLong, cap_bodies

CAP = 1000


def fetch(status: int, body: bytes, *, errors_only: bool = False) -> httpx2.Response:
    """GET through a client with the hook, from a server answering `status` with `body`
    in 100-byte chunks, as a server streams it."""

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 100):
            yield body[start : start + 100]

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, content=chunks())

    async def get() -> httpx2.Response:
        hooks = {"response": [cap_bodies(CAP, errors_only=errors_only)]}
        transport = httpx2.MockTransport(answer)
        async with httpx2.AsyncClient(transport=transport, event_hooks=hooks) as client:
            return await client.get("http://server.test/v1/chat/completions")

    return asyncio.run(get())


@pytest.mark.parametrize("status", [200, 500])
def test_a_body_at_the_cap_is_read_whole(status: int) -> None:
    response = fetch(status, b"x" * CAP)
    assert (response.status_code, response.content) == (status, b"x" * CAP)


@pytest.mark.parametrize("status", [200, 500])
def test_a_body_past_the_cap_raises(status: int) -> None:
    says = f"sent an HTTP {status} response past the {CAP:,}-byte cap"
    with pytest.raises(BodyTooLong, match=says):
        fetch(status, b"x" * (CAP + 1))


def test_errors_only_leaves_a_success_to_its_reader_and_caps_an_error() -> None:
    assert len(fetch(200, b"x" * (CAP * 3), errors_only=True).content) == CAP * 3
    with pytest.raises(BodyTooLong, match="sent an HTTP 502 response past"):
        fetch(502, b"x" * (CAP + 1), errors_only=True)
