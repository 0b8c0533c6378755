"""An event loop only once a coroutine must wait: `run`, `needs_loop`, `pause`, `asyncio`.

Importing asyncio costs more than Python's own start-up (ssl, concurrent.futures and
logging come with it: ~28 ms of a `-p` run on a small machine), and a turn that waits
on nothing (a scripted model's answer, no hook or tool for its events) never needs a
loop. `run(main)` steps the coroutine itself; code about to use asyncio first awaits
`needs_loop()`, and at the first such await asyncio is imported and the rest of `main`
runs on a new event loop, as `asyncio.run` would have run it whole. Under a loop
already running (every other caller), `needs_loop()` returns at once.

A module on such a path names asyncio through `asyncio` here, which imports it at
its first use, never at the module's import (an `except asyncio.CancelledError:`
looks it up only once an exception reaches it):

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        import asyncio
    else:
        from hookgate.hooks.loop import asyncio
"""

from __future__ import annotations

import sys
import types
from _thread import get_ident

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Coroutine, Generator
    from typing import Any, TypeVar

    T = TypeVar("T")

#: The thread in which `step_until_wait` advances a coroutine without a loop, if any.
_stepping_in: int | None = None
#: What `needs_loop` yields to `step_until_wait`: asyncio is wanted from here on.
_WANTS_LOOP = "hookgate: wants an event loop"


class _LazyAsyncio:
    """The asyncio module, imported at the first attribute asked of it; each attribute
    is kept, so the next lookup costs what a module's does."""

    def __getattr__(self, name: str) -> Any:
        import asyncio

        value = getattr(asyncio, name)
        setattr(self, name, value)
        return value


asyncio: Any = _LazyAsyncio()


def loop_running() -> bool:
    """Whether this thread runs an event loop (never true before asyncio is imported)."""
    loaded = sys.modules.get("asyncio")
    return loaded is not None and loaded._get_running_loop() is not None


@types.coroutine
def needs_loop() -> Generator[str, None, None]:
    """Await before using asyncio: under `run`'s stepping, the rest of the coroutine
    moves onto an event loop here; elsewhere it returns at once."""
    if _stepping_in == get_ident() and not loop_running():
        yield _WANTS_LOOP


@types.coroutine
def pause() -> Generator[None, None, None]:
    """Let other tasks run, as `asyncio.sleep(0)` does, without importing asyncio: a
    bare yield is the loop's "run me again soon", and `run`'s stepping's too."""
    yield


def step_until_wait(coro: Coroutine[Any, Any, T]) -> tuple[bool, T | None]:
    """Advance `coro` without a loop: `(True, result)` once it returns, or `(False, None)`
    where it awaits `needs_loop()`, to be finished by awaiting `resumed(coro)` on a loop.

    Its exceptions propagate. A yield other than `pause`'s or `needs_loop`'s is asyncio
    used without asking for a loop first: a bug, raised into the coroutine as such.
    """
    global _stepping_in
    outer, _stepping_in = _stepping_in, get_ident()
    try:
        sent = coro.send(None)
        while sent is not _WANTS_LOOP:
            if sent is None:  # `pause`: nothing else runs here, go on
                sent = coro.send(None)
            else:
                sent = coro.throw(RuntimeError(f"awaited {sent!r} before `needs_loop()`"))
    except StopIteration as returned:
        return True, returned.value
    finally:
        _stepping_in = outer
    return False, None


async def resumed(coro: Coroutine[Any, Any, T]) -> T:
    """The rest of `coro`, stopped by `step_until_wait` at its `needs_loop()`, run on this loop."""
    return await _Resumed(coro)  # type: ignore[no-any-return]


class _Resumed:
    """An awaitable of a coroutine part-run: awaiting it continues it where it stopped
    (`await` refuses a coroutine that is inside an await of its own already)."""

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._coro = coro

    def __await__(self) -> Generator[Any, Any, Any]:
        # The first value sent is None: `needs_loop()`'s yield returns, on the loop.
        return self._coro.__await__()


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, with asyncio imported and a loop started only if `main`
    awaits `needs_loop()`; until then it runs on this thread, step by step."""
    done, result = step_until_wait(main)
    if done:
        return result  # type: ignore[return-value]
    import asyncio as loaded

    return loaded.run(resumed(main))
