"""The gate every tool call passes: a value of its session alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hookgate.hooks import HookEngine
from hookgate.runtime.consent import AlwaysDeny
from hookgate.runtime.toolcall import ToolGate
from hookgate.security.policy import Policy
from hookgate.tools import ToolContext, ToolRegistry


@pytest.fixture
def engine() -> Iterator[HookEngine]:
    engine = HookEngine(session_id="s")
    yield engine
    engine.close()


def test_gates_built_alike_never_share_approvals_and_never_change(
    engine: HookEngine, tmp_path: Path
) -> None:
    def gate() -> ToolGate:
        return ToolGate(engine, ToolRegistry(), Policy(), AlwaysDeny(), ToolContext(tmp_path, {}))

    first, second = gate(), gate()

    assert first.approvals is not second.approvals  # one session's approval is its own
    with pytest.raises(AttributeError):
        first.approvals = second.approvals
