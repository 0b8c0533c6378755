"""Fixtures for `hooks test` and `hooks replay`: a copy of the shipped examples (the agent
file, its hooks and its test file) to run and to break, and a scratch project."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from runtime.project import HOOKGATE, Project

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "hookgate" / "examples"
#: Seconds one `hookgate hooks test|replay` may take: ~30 cases, each a few hook processes.
RUN_TIMEOUT = 120


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    """A copy of `examples/`: its hooks are scripts a test may edit."""
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("__pycache__", "adapters"))
    return copy


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    directory = (tmp_path / "project").resolve()
    directory.mkdir()
    monkeypatch.setenv("HOOKGATE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return Project(directory, tmp_path / "home")


def hookgate(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`hookgate ARGS` as a user runs it, in `cwd`; output captured."""
    return subprocess.run(
        [str(HOOKGATE), *args],
        cwd=cwd, env={**os.environ, "NO_COLOR": "1", **(env or {})}, capture_output=True,
        text=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
