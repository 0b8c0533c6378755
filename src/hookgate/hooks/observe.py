"""What an embedder may watch of the engine: each event's hook runs, after the fact.

`HookEngine(observer=...)` calls `EventObserver.event_decided` once per event that ran
hooks, with a `HookRun` per hook. The engine imports nothing for it and times nothing
without an observer; what the observer does with it (OpenTelemetry, in
`hookgate.telemetry`) is the embedder's affair. An observer must not raise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from hookgate.hooks.config import HookSpec
from hookgate.hooks.outcome import Outcome
from hookgate.hooks.records import NamedTuple


class HookRun(NamedTuple):
    """One hook's run on one event."""

    hook: HookSpec
    started_ns: int
    """Wall-clock start, `time.time_ns()`."""
    duration_ns: int
    outcome: str
    """`allowed` (it let the event on, changed or not), `blocked`, `failed`, `timeout`."""
    exit_status: int | None = None
    """A process hook's exit status; None for the other kinds and where it never exited."""


def hook_kind(hook: HookSpec) -> str:
    """`python`, `model`, `http`, `persistent` or `command`."""
    if hook.function is not None:
        return "python"
    if hook.model is not None:
        return "model"
    if hook.http is not None:
        return "http"
    return "persistent" if hook.persistent else "command"


class EventObserver(Protocol):
    """Told of every event that ran hooks, once its outcome is known."""

    def event_decided(
        self,
        event: str,
        payload: Mapping[str, Any],
        outcome: Outcome,
        runs: Sequence[HookRun],
        started_ns: int,
    ) -> None:
        """`event` on `payload` (as it came in) decided `outcome` through `runs`."""
