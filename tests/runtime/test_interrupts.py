"""`Interrupts`: a signal cancels the step under way, whether it runs on an event loop
or, until it must wait, without one (`hookgate.hooks.loop`).

Each test signals its own process at a known point of a step: where the step stands
when the signal lands is then certain, as no signal from outside could make it.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

from hookgate.hooks import loop
from hookgate.runtime.interrupts import Interrupts


def test_a_nested_coroutine_moves_with_its_caller() -> None:
    """`Interrupts.run` steps its step itself: the step and its caller both end on
    the one loop `run` started, each once."""
    order: list[str] = []

    async def step() -> str:
        order.append("step before")
        await loop.needs_loop()
        await asyncio.sleep(0)
        order.append("step after")
        return "done"

    async def main() -> Any:
        with Interrupts(()) as interrupts:
            result = await interrupts.run(step())
        order.append("main after")
        return result

    assert loop.run(main()) == "done"
    assert order == ["step before", "step after", "main after"]


def _self_signal() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def test_a_signal_while_a_step_runs_without_a_loop_cancels_it_once_it_waits() -> None:
    """The signal is remembered while nothing can be cancelled; the step moves onto
    the loop, is cancelled there (its clean-up runs), and the run reports the signal."""
    cleaned: list[str] = []

    async def step() -> str:
        _self_signal()
        await loop.needs_loop()
        try:
            await asyncio.sleep(30)
        finally:
            cleaned.append("cleaned up")
        return "not reached"

    async def main() -> Any:
        with Interrupts((signal.SIGINT,)) as interrupts:
            return await interrupts.run(step())

    assert loop.run(main()) == 128 + signal.SIGINT
    assert cleaned == ["cleaned up"]


def test_a_signal_during_a_step_that_never_waits_stops_the_next_step() -> None:
    started: list[str] = []

    async def first() -> str:
        _self_signal()
        return "first"

    async def second() -> str:
        started.append("second")
        return "second"

    async def main() -> Any:
        with Interrupts((signal.SIGINT,)) as interrupts:
            results = [await interrupts.run(first()), await interrupts.run(second())]
            return results, interrupts.exit_code

    assert loop.run(main()) == (["first", 128 + signal.SIGINT], 128 + signal.SIGINT)
    assert started == []


def test_interrupts_restore_the_handlers_they_replaced() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with Interrupts((signal.SIGTERM,)):
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before
