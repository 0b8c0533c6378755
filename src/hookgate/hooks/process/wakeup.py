"""A wake-up that resumes the task awaiting it at once, from the loop's callback.

An `asyncio.Future` runs its done callbacks on the loop's next pass: a reader callback
that settles one costs each exchange a pass more (a selector call and the loop's own
work, about as much as the rest of a persistent hook's event). `Wakeup` keeps asyncio's
protocol for future-like objects (`asyncio.isfuture`: `_asyncio_future_blocking`,
`get_loop`, `add_done_callback`, `result`, `cancel`) and `wake` runs the waiting task's
callback there and then, in the task's context. `wake` must be called from a loop
callback (a reader's, a timer's), never from inside a task; `cancel` schedules the
callbacks the way a future does.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Generator
from typing import Any

Callback = Callable[["Wakeup"], object]


class Wakeup:
    """Awaited once by one task; `wake` (from a loop callback) resumes it."""

    _asyncio_future_blocking = False

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._callbacks: list[tuple[Callback, contextvars.Context | None]] = []
        self._done = False
        self._cancel_message: object = None
        self._cancelled = False

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def done(self) -> bool:
        return self._done

    def cancelled(self) -> bool:
        return self._cancelled

    def result(self) -> None:
        if self._cancelled:
            raise asyncio.CancelledError(*(() if self._cancel_message is None else
                                           (self._cancel_message,)))  # fmt: skip
        if not self._done:
            raise asyncio.InvalidStateError("not woken yet")

    def exception(self) -> BaseException | None:
        self.result()
        return None

    def add_done_callback(
        self, callback: Callback, *, context: contextvars.Context | None = None
    ) -> None:
        if self._done:
            self._loop.call_soon(callback, self, context=context)
        else:
            self._callbacks.append((callback, context))

    def remove_done_callback(self, callback: Callback) -> int:
        kept = [(fn, ctx) for fn, ctx in self._callbacks if fn != callback]
        removed, self._callbacks = len(self._callbacks) - len(kept), kept
        return removed

    def cancel(self, msg: object = None) -> bool:
        if self._done:
            return False
        self._done = self._cancelled = True
        self._cancel_message = msg
        callbacks, self._callbacks = self._callbacks, []
        for callback, context in callbacks:
            self._loop.call_soon(callback, self, context=context)
        return True

    def wake(self) -> None:
        """Resume the waiting task now (a no-op once woken or cancelled)."""
        if self._done:
            return
        self._done = True
        callbacks, self._callbacks = self._callbacks, []
        for callback, context in callbacks:
            if context is None:
                callback(self)
            else:
                context.run(callback, self)

    def __await__(self) -> Generator[Any, None, None]:
        if not self._done:
            self._asyncio_future_blocking = True
            yield self
        self.result()

    __iter__ = __await__
