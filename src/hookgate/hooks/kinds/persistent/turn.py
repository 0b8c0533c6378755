"""A persistent hook's turn on one event loop: one event at a time, in order.

`asyncio.Lock`'s rule (first come, first served; a waiter that gives up passes on a
turn handed to it), without its coroutine where nobody waits: taking a free turn is
an assignment, and a hook asked event after event never waits. asyncio is imported by
the first wait (a loop runs, so it is loaded already).
"""

from __future__ import annotations

import contextlib
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio


class Turn:
    """`busy` while an event has the hook; `release` hands it to the next in line."""

    def __init__(self) -> None:
        self.busy = False
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def wait(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        """Wait for the turn, which `release` hands over; `TimeoutError` after
        `timeout` seconds, the turn then left to the next in line."""
        import asyncio

        given = loop.create_future()
        self._waiting.append(given)
        try:
            async with asyncio.timeout(timeout):
                await given
        except BaseException:
            if given.done() and not given.cancelled():
                self.release()  # handed the turn as it gave up: the next one has it
            else:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(given)
            raise

    def release(self) -> None:
        """End the turn: the first event still waiting has it, else it is free."""
        while self._waiting:
            given = self._waiting.popleft()
            if not given.done():
                given.set_result(None)
                return
        self.busy = False
