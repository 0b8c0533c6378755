"""Start an external process, feed it, read it, bound it, and leave nothing of it behind.

`run_process` is the one function hookgate starts processes with: hooks and the shell
tool alike; `stream_process`, its sibling, hands stdout over as it arrives (an asked
agent's answer). The process runs in a session (and process group) of its own; stdin is
written while stdout and stderr are drained, each capped; the timeout is enforced here,
whatever the process does; at the end the whole group is killed and the leader reaped.
Every child is marked for `guard`'s guardian, which stops them all if we die first.

`run_process_sync` gives a caller without an event loop the same guarantees, waiting
in poll(2). Both drive one `core.Process`; `aio` and `blocking` only decide when to
wait and for what. `aio`, and with it asyncio, is imported on first use of its two
functions: a synchronous caller (`hooks fire`, a `run_sync` embedder) never pays for it.
"""

from __future__ import annotations

from hookgate.hooks.process.blocking import run_process_sync
from hookgate.hooks.process.core import (
    DEFAULT_PIPE_SIZE,
    EOF_GRACE,
    KILL_GRACE,
    OUTPUT_CAP,
    PIPE_SIZE,
    QUIET_START,
    Input,
    ProcessResult,
    SpawnError,
    programs_path,
    resolve_program,
)
from hookgate.hooks.process.guard import (
    GUARD_VAR,
    adopt_orphans_at_first_start,
    guarded,
    reap_orphans,
)
from hookgate.hooks.process.pace import HOLD_WAIT, PAST_HOLD, QUICK, SLOW_RUNS, runs_since_quick
from hookgate.hooks.process.subreaper import adopt_orphans

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hookgate.hooks.process.aio import run_process, stream_process


def __getattr__(name: str) -> Any:
    if name in ("run_process", "stream_process"):
        from hookgate.hooks.process import aio

        return getattr(aio, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_PIPE_SIZE",
    "EOF_GRACE",
    "GUARD_VAR",
    "HOLD_WAIT",
    "KILL_GRACE",
    "OUTPUT_CAP",
    "PAST_HOLD",
    "PIPE_SIZE",
    "QUICK",
    "QUIET_START",
    "SLOW_RUNS",
    "Input",
    "ProcessResult",
    "SpawnError",
    "adopt_orphans",
    "adopt_orphans_at_first_start",
    "guarded",
    "programs_path",
    "reap_orphans",
    "resolve_program",
    "run_process",
    "run_process_sync",
    "runs_since_quick",
    "stream_process",
]
