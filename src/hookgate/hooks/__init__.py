"""hookgate's hook engine: events, config, runner and reply formats.

A library of its own: it knows nothing of models, tools or front ends. Embed it as

    config = load_hooks_file(Path("hookgate.yaml"))
    engine = HookEngine(config, session_id="...")
    outcome = await engine.run("preToolCall", {"tool": "shell", "arguments": {...}})
    if outcome.blocked: ...

(`engine.run_sync(...)` where there is no event loop), `await engine.aclose()` when done
(it closes the http hooks' pooled connections), and call `adopt_orphans()` once at
start-up where PID 1 may not reap.

Its rooms: the core here (events, config, runner, chain, outcome, replies); `kinds/`,
one per hook kind (persistent, python, http, model; a process hook is the runner's
own); `formats/`, the reply formats; `claude/`, Claude Code's files; `author/`, the
hook author's commands; `files/`, `runs/`, `process/` and `shell/` beneath them.
"""

from __future__ import annotations

from hookgate.hooks.config import HooksConfig, HookSpec, callable_hook, parse_hooks
from hookgate.hooks.configfile import load_hooks_file
from hookgate.hooks.errors import ConfigError, HookgateError
from hookgate.hooks.events import EVENTS, EventSpec, OnError, canonical_event
from hookgate.hooks.formats import FORMATS, BadReply, HookReply
from hookgate.hooks.outcome import MAX_CONTINUES
from hookgate.hooks.process import ProcessResult, SpawnError, adopt_orphans, run_process_sync
from hookgate.hooks.runner import HookEngine, HookFailure, Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hookgate.hooks.process import run_process


def __getattr__(name: str) -> Any:
    if name == "run_process":  # asyncio on first use only (`hookgate.hooks.process`)
        from hookgate.hooks import process

        return process.run_process
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EVENTS",
    "FORMATS",
    "MAX_CONTINUES",
    "BadReply",
    "ConfigError",
    "EventSpec",
    "HookEngine",
    "HookFailure",
    "HookReply",
    "HookSpec",
    "HookgateError",
    "HooksConfig",
    "OnError",
    "Outcome",
    "ProcessResult",
    "SpawnError",
    "adopt_orphans",
    "callable_hook",
    "canonical_event",
    "load_hooks_file",
    "parse_hooks",
    "run_process",
    "run_process_sync",
]
