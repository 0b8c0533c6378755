"""Fixtures of the hook engine tests: engines built from hook entries, run to an Outcome."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import HookEngine, HooksConfig, Outcome, parse_hooks
from hookgate.hooks.files.yamlfile import Where

SESSION_ID = "test-session"


def recorded_holds(engine: HookEngine) -> list[float]:
    """The `hold` each process hook run of `engine` is started with, from now on."""
    holds: list[float] = []
    real_run = engine._run_process

    async def run_process(*args: Any, hold: float, **options: Any) -> Any:
        holds.append(hold)
        return await real_run(*args, hold=hold, **options)

    engine._run_process = run_process  # type: ignore[method-assign]
    return holds


def fire(engine: HookEngine, event: str, payload: Mapping[str, Any]) -> Outcome:
    """Run `event`'s hooks to their Outcome, as the agent's loop would."""
    return asyncio.run(engine.run(event, payload))


@pytest.fixture
def make_engine(tmp_path: Path) -> Iterator[Callable[..., HookEngine]]:
    """`make_engine({"preToolCall": [{"command": ...}]}, **options)`: a `HookEngine`.

    The entries go through the same validation as a YAML file's `hooks:` mapping,
    with `tmp_path` as the config's folder. Each engine is closed after the test, as a
    session closes its own: its http hooks' thread and persistent hooks' processes
    would otherwise outlive the test and close their fds under a later one.
    """
    made: list[HookEngine] = []

    def make(hooks: Mapping[str, Any], **engine_options: Any) -> HookEngine:
        config: HooksConfig = parse_hooks(dict(hooks), Where("test.yaml"), base_dir=tmp_path)
        engine_options.setdefault("session_id", SESSION_ID)
        made.append(HookEngine(config, **engine_options))
        return made[-1]

    yield make
    for engine in made:
        engine.close()


def fire_sync(engine: HookEngine, event: str, payload: Mapping[str, Any]) -> Outcome:
    """Run `event`'s hooks to their Outcome without an event loop."""
    return engine.run_sync(event, payload)


@pytest.fixture(params=["async", "sync"])
def run_hooks(
    request: pytest.FixtureRequest,
) -> Callable[[HookEngine, str, Mapping[str, Any]], Outcome]:
    """`run_hooks(engine, event, payload)`: the Outcome, through `run` on a fresh event
    loop or through `run_sync`; every test that uses it holds for both."""
    return fire if request.param == "async" else fire_sync
