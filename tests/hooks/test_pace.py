"""A quick hook stays quick through a run that a busy machine stretched (`process.pace`).

Whether a run counted as quick is set here by `QUICK` itself (every run within it, or
none), so that what is asserted is the rule, not this machine's speed: the held waits
are counted, never timed.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable

import pytest

from hookgate.hooks import HookEngine
from hookgate.hooks import runner as runner_module
from hookgate.hooks.kinds.persistent import resident as resident_module
from hookgate.hooks.kinds.persistent.resident import Resident
from hookgate.hooks.process import PAST_HOLD, SLOW_RUNS, runs_since_quick
from hooks.conftest import recorded_holds

#: `QUICK` where every run counts as quick, and a `HOLD_WAIT` no run outlasts here.
EVERY_RUN = 60.0
#: `QUICK` where no run counts as quick: each is "stretched", none outlasts the hold.
NO_RUN = 0.0
SHELL_CALL = {"tool": "shell", "arguments": {"command": "ls"}}


def quick_within(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    for module in (runner_module, resident_module):
        monkeypatch.setattr(module, "QUICK", seconds)
        monkeypatch.setattr(module, "HOLD_WAIT", EVERY_RUN)


def test_a_quick_process_hook_stays_held_through_stretched_runs(
    make_engine: Callable[..., HookEngine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs over `QUICK` that end within the hold keep the hook held for `SLOW_RUNS`
    runs in a row; only then is it waited for on the loop. (It used to be one.)"""
    engine = make_engine({"preToolCall": [{"name": "guard", "args": ["/bin/true"]}]})
    holds = recorded_holds(engine)

    async def events() -> None:
        quick_within(monkeypatch, EVERY_RUN)
        for _ in range(3):
            assert (await engine.run("preToolCall", SHELL_CALL)).allowed
        quick_within(monkeypatch, NO_RUN)
        for _ in range(SLOW_RUNS + 2):
            assert (await engine.run("preToolCall", SHELL_CALL)).allowed
        quick_within(monkeypatch, EVERY_RUN)
        for _ in range(2):
            assert (await engine.run("preToolCall", SHELL_CALL)).allowed

    asyncio.run(events())
    # Not known to be quick at first; held from then on, through SLOW_RUNS stretched
    # runs; on the loop after them; quick again after one run within `QUICK`.
    expected = [0.0] + [EVERY_RUN] * (2 + SLOW_RUNS) + [0.0, 0.0] + [0.0, EVERY_RUN]
    assert holds == expected, holds


#: A resident child that echoes each line at once.
ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"


def test_a_quick_persistent_hook_stays_held_through_stretched_replies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same rule for a persistent hook's replies: counted in the held waits."""
    resident = Resident.start([sys.executable, "-c", ECHO], env=dict(os.environ), cwd=None)
    held = [0]
    real = Resident._one_read

    def one_read(self: Resident, seconds: float) -> bytes | None:
        held[0] += 1
        return real(self, seconds)

    monkeypatch.setattr(Resident, "_one_read", one_read)

    async def asks() -> list[int]:
        counts = []
        for number, quick in enumerate([EVERY_RUN] * 3 + [NO_RUN] * (SLOW_RUNS + 2)):
            quick_within(monkeypatch, quick)
            before = held[0]
            line = b"%d\n" % number
            assert await resident.ask(line, time.monotonic() + 10) == line.strip()
            counts.append(held[0] - before)
        await resident.stop()
        return counts

    try:
        counts = asyncio.run(asks())
    finally:
        resident.kill()
    assert counts == [0] + [1] * (2 + SLOW_RUNS) + [0, 0], counts


@pytest.mark.parametrize(
    ("before", "seconds", "held", "after"),
    [
        (SLOW_RUNS, 0.0005, 0.0, 0),  # one quick run makes a hook quick
        (0, 0.003, 0.005, 1),  # stretched, within the hold: one more
        (SLOW_RUNS - 1, 0.003, 0.005, SLOW_RUNS),  # the last one allowed
        (SLOW_RUNS, 0.003, 0.0, SLOW_RUNS),  # no higher than SLOW_RUNS
        (0, 0.05, 0.005, PAST_HOLD),  # past the hold once: still quick (a busy machine)
        (PAST_HOLD, 0.05, 0.005, SLOW_RUNS),  # past it twice in a row: slow
        (PAST_HOLD, 0.0005, 0.005, 0),  # past it, then quick again: quick
    ],
)
def test_runs_since_quick(before: int, seconds: float, held: float, after: int) -> None:
    assert runs_since_quick(before, seconds, held=held, quick=0.001) == after
