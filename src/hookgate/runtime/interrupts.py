"""SIGINT, SIGTERM and SIGHUP for a run (`-p`, `acp`, an asked agent): cancel the step under way.

A run is a few steps (open the agent, run the turn); the first signal cancels the
one in progress, and the run ends with 128 + the signal's number. The handlers cover
the whole run, start-up included: a signal while sessionStart hooks run must stop
them, not kill hookgate and leave them orphaned in their own process groups. A signal
hookgate was started with ignored stays ignored: `nohup hookgate -p …` outlives its
terminal, and a background job (`&`) its Ctrl-C, as a shell's users expect.

A step runs without an event loop until it must wait (`hookgate.hooks.loop`): the
handlers are the process's own, which need no loop, and a signal caught while a step
runs so is remembered, to cancel it once it moves onto a loop, or the next step.
"""

from __future__ import annotations

import signal
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

from hookgate.hooks.loop import loop_running, needs_loop, resumed, step_until_wait

TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
else:
    from hookgate.hooks.loop import asyncio

#: A run ended by signal N exits with this plus N, as a shell reports it.
EXIT_SIGNAL_BASE = 128
#: SIGHUP is a closed terminal or `kill -HUP`: a request to stop, like SIGTERM.
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
T = TypeVar("T")


class Interrupts:
    """`with Interrupts() as interrupts: result = await interrupts.run(step)`.

    Every signal is remembered in `caught`; only the first cancels anything, so an
    impatient second one cannot cut the cancelled turn's postGeneration short.
    """

    def __init__(self, signals: tuple[signal.Signals, ...] = SIGNALS) -> None:
        self.signals = signals
        self.caught: list[int] = []
        self._step: asyncio.Future[Any] | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Interrupts:
        self.signals = tuple(s for s in self.signals if not ignored(s))
        for signum in self.signals:
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    @property
    def exit_code(self) -> int | None:
        """128 + the first signal caught, or None."""
        return EXIT_SIGNAL_BASE + self.caught[0] if self.caught else None

    def _handle(self, signum: int, _: FrameType | None) -> None:
        # Python runs this between two bytecodes of whatever runs: the step is
        # cancelled by the loop, at its next turn, never from here.
        self.caught.append(signum)
        if len(self.caught) == 1 and self._step is not None:
            self._step.get_loop().call_soon_threadsafe(self._step.cancel)

    async def run(self, step: Coroutine[Any, Any, T]) -> T | int:
        """`step`'s result, or the exit code of the signal that cancelled it."""
        if self.caught:  # signalled between two steps: do not start the next
            step.close()
            return EXIT_SIGNAL_BASE + self.caught[0]
        if not loop_running():
            done, result = step_until_wait(step)
            if done:  # a signal now is remembered: the caller sees `exit_code`
                return result  # type: ignore[return-value]
            await needs_loop()
            step = resumed(step)
        task: asyncio.Future[T] = asyncio.ensure_future(step)
        self._step = task
        if self.caught:  # caught before the loop: cancelled once it has resumed
            task.get_loop().call_soon(task.cancel)
        try:
            return await task
        except asyncio.CancelledError:
            if not self.caught:
                raise
            return EXIT_SIGNAL_BASE + self.caught[0]
        finally:
            self._step = None


def ignored(signum: int) -> bool:
    """Whether `signum` is ignored here: inherited so (`nohup`, a background job), it
    asks that the program ignore it too."""
    return signal.getsignal(signum) is signal.SIG_IGN


async def cancel_started(turn: asyncio.Task[Any], started: asyncio.Event) -> None:
    """Cancel a turn a front end runs as a task, once: the way ACP and the window stop one.

    It waits for the turn's first step (a task cancelled before it would skip its
    cleanup), and never cancels twice (a second cancel would cut postGeneration short).
    """
    await started.wait()
    if not turn.cancelling():
        turn.cancel()
