"""Each adapter example runs offline as documented, and its guard denies rm -rf."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "hookgate" / "examples" / "adapters"
NEEDS = {
    "langchain_agent.py": "langchain",
    "pydantic_ai_agent.py": "pydantic_ai",
    "openai_agents_agent.py": "agents",
    "claude_agent_sdk_options.py": "claude_agent_sdk",
}


def test_every_example_is_listed() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(NEEDS)


@pytest.mark.parametrize("example", sorted(NEEDS))
def test_the_example_runs_and_the_guard_denies_rm_rf(example: str) -> None:
    pytest.importorskip(NEEDS[example])
    ran = subprocess.run(
        [sys.executable, str(EXAMPLES / example)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert "[denied by a hook: rm -rf is not allowed by this project" in ran.stdout
