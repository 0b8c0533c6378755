"""Whether a hook is quick: its next run waited for with the event loop held, or on it.

A busy machine stretches a run now and then and never shortens one, so one run within
`QUICK` shows the hook can be quick, and one over it shows little: a hook stays quick
until `SLOW_RUNS` runs in a row took longer, or two held waits in a row ended without
the exit or answer (`HOLD_WAIT`, 2.5 times `QUICK`). Not one: at load 1.2 on two cores,
a `sh -c true` of 0.7 ms outlasted the hold in one run of six to nine, preempted, not
slow; a hook that did turn slow holds the loop twice (10 ms in all), then no more.
A hook not yet run is not quick. The count is the caller's (one int per hook).
"""

from __future__ import annotations

#: Seconds within which a hook that ran (a persistent one: answered) is quick: on an
#: event loop, its next run is waited for with the loop held (poll(2)), for at most
#: `HOLD_WAIT`. Such hooks are done in a millisecond or two, of which a pass of the
#: loop's own machinery (a reader added and removed, the selector, a callback) would
#: take 50 to 100 µs; a slower hook would gain too little to hold the loop for. Not 1 ms:
#: `sh -c true`, 0.65 ms on a quiet machine, took over 1 ms in a third of its runs
#: at load 3 on two cores.
QUICK = 0.002
#: The longest a quick hook holds the loop; one that takes longer is waited for on the
#: loop from then on, until it is quick again. Not shorter: a poll(2) timeout before
#: the kernel's next tick (4 ms at HZ=250) makes it arm and cancel a timer of its own,
#: which costs a virtual machine 20 µs.
HOLD_WAIT = 0.005
#: Runs in a row over `QUICK` (none of them past a hold) after which a hook is no longer
#: quick. On a loaded machine a run of 0.7 ms took 2.4 to 8 ms now and then: a single
#: stretched run no longer sends a quick hook to the slower path.
SLOW_RUNS = 8
#: What a held run that outlasted the hold counts for: two in a row end the quick path.
PAST_HOLD = SLOW_RUNS // 2


def runs_since_quick(before: int, seconds: float, *, held: float, quick: float) -> int:
    """The count after a run of `seconds`, from the count `before` it: 0 after a quick
    run, `PAST_HOLD` more after a run `held` for (seconds, 0 if not) that outlasted the
    hold, else one more (at most `SLOW_RUNS`). The hook is quick while the count is
    below `SLOW_RUNS`. `quick` is the caller's `QUICK` (a test may change it there)."""
    if seconds <= quick:
        return 0
    return min(before + (PAST_HOLD if held and seconds > held else 1), SLOW_RUNS)
