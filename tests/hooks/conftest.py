"""Fixtures of the hook engine tests: engines built from hook entries, run to an Outcome."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import HookEngine, HooksConfig, Outcome, parse_hooks
from hookgate.hooks.yamlfile import Where

SESSION_ID = "test-session"


def fire(engine: HookEngine, event: str, payload: Mapping[str, Any]) -> Outcome:
    """Run `event`'s hooks to their Outcome, as the agent's loop would."""
    return asyncio.run(engine.run(event, payload))


@pytest.fixture
def make_engine(tmp_path: Path) -> Callable[..., HookEngine]:
    """`make_engine({"preToolCall": [{"command": ...}]}, **options)`: a `HookEngine`.

    The entries go through the same validation as a YAML file's `hooks:` mapping,
    with `tmp_path` as the config's folder.
    """

    def make(hooks: Mapping[str, Any], **engine_options: Any) -> HookEngine:
        config: HooksConfig = parse_hooks(dict(hooks), Where("test.yaml"), base_dir=tmp_path)
        engine_options.setdefault("session_id", SESSION_ID)
        return HookEngine(config, **engine_options)

    return make


@pytest.fixture
def run_hooks() -> Callable[[HookEngine, str, Mapping[str, Any]], Outcome]:
    """`run_hooks(engine, event, payload)`: the Outcome, run on a fresh event loop."""
    return fire
