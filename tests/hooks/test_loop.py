"""`hookgate.hooks.loop`: a coroutine runs without an event loop until it must wait.

`run` must give what `asyncio.run` gives, in every case: a value, an exception from
either side of the move onto a loop, a coroutine that never asked for one. The
imports are checked in a fresh interpreter: a test process has asyncio loaded already.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import pytest

from hookgate.hooks import loop


async def _answer() -> int:
    await loop.pause()
    await loop.pause()
    return 42


def test_a_coroutine_that_never_waits_returns_without_a_loop() -> None:
    seen: list[bool] = []

    async def main() -> int:
        seen.append(loop.loop_running())
        return await _answer()

    assert loop.run(main()) == 42
    assert seen == [False]


def test_the_rest_after_needs_loop_runs_on_a_loop() -> None:
    seen: list[tuple[str, bool]] = []

    async def main() -> str:
        seen.append(("before", loop.loop_running()))
        await loop.needs_loop()
        seen.append(("after", loop.loop_running()))
        await asyncio.sleep(0.001)
        await loop.needs_loop()  # on the loop already: returns at once
        return "waited"

    assert loop.run(main()) == "waited"
    assert seen == [("before", False), ("after", True)]


@pytest.mark.parametrize("where", ["before", "after"])
def test_an_exception_propagates_from_either_side_of_the_move(where: str) -> None:
    async def main() -> None:
        if where == "before":
            raise ValueError("before")
        await loop.needs_loop()
        await asyncio.sleep(0)
        raise ValueError("after")

    with pytest.raises(ValueError, match=where):
        loop.run(main())


def test_asyncio_used_without_asking_for_a_loop_is_a_clear_error() -> None:
    async def main() -> str:
        future: asyncio.Future[None] = asyncio.Future(loop=asyncio.new_event_loop())
        try:
            await future
        except RuntimeError as exc:
            return str(exc)
        finally:
            future.get_loop().close()
        return "no error"

    assert "before `needs_loop()`" in loop.run(main())


def test_needs_loop_in_another_thread_returns_at_once() -> None:
    """The stepping is the thread's: a loop another thread runs (the http hooks' one)
    while a coroutine is stepped here goes on as asyncio would."""
    results: list[str] = []

    async def elsewhere() -> str:
        await loop.needs_loop()
        await asyncio.sleep(0)
        return "other thread"

    async def main() -> None:
        import threading

        thread = threading.Thread(target=lambda: results.append(asyncio.run(elsewhere())))
        thread.start()
        thread.join()

    loop.run(main())
    assert results == ["other thread"]


def test_asyncio_is_imported_only_once_a_coroutine_must_wait() -> None:
    script = textwrap.dedent(
        """
        import sys
        from hookgate.hooks import loop

        async def quick():
            await loop.pause()
            return "quick"

        async def waits():
            await loop.needs_loop()
            return "waits"

        print(loop.run(quick()), "asyncio" in sys.modules)
        print(loop.run(waits()), "asyncio" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split("\n")[:2] == ["quick False", "waits True"]
