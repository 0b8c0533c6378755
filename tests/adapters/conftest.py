"""The hooks every adapter test runs, as real processes: the example rm -rf guard
(a shell script) and a Python policy hook, in one hookgate.yaml per test."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
GUARD = REPO / "examples" / "guard-rm-rf.sh"
POLICY = Path(__file__).resolve().parent / "hooks" / "policy.py"
ASK = Path(__file__).resolve().parent / "hooks" / "ask.py"

HOOKS_YAML = f"""\
hooks:
  preGeneration:
    - command: {sys.executable} {POLICY}
  preToolCall:
    - matcher: ^shell$
      command: {GUARD}
      onError: fail
    - matcher: ^fragile$
      command: exit 3          # a guard that cannot run
      onError: fail
    - matcher: (echo|deploy|research|ask_agent)$
      command: {sys.executable} {POLICY}
    - matcher: deploy$
      format: claude
      command: {sys.executable} {ASK}
  postToolCall:
    - matcher: (echo|deploy|broken|research|ask_agent)$
      command: {sys.executable} {POLICY}
  preAsk:
    - command: {sys.executable} {POLICY}
  subagentStart:
    - command: {sys.executable} {POLICY}
  subagentStop:
    - command: {sys.executable} {POLICY}
  postAsk:
    - command: {sys.executable} {POLICY}
  postGeneration:
    - command: {sys.executable} {POLICY}
"""


@dataclass
class Hooked:
    """A project whose hookgate.yaml runs the test hooks, and what they wrote."""

    dir: Path

    @property
    def file(self) -> Path:
        return self.dir / "hookgate.yaml"

    def ends(self) -> list[dict[str, Any]]:
        """Every postGeneration event the Python hook saw, in order."""
        log = self.dir / "ends.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]

    def results(self) -> list[dict[str, Any]]:
        """The results of the `broken` tool the Python hook's postToolCall saw."""
        log = self.dir / "results.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def hand_offs(self) -> list[str]:
        """The hand-off tool's events the Python hook saw, in order (`event:name`)."""
        log = self.dir / "asks.log"
        return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def hooked(tmp_path: Path) -> Hooked:
    project = Hooked(tmp_path)
    project.file.write_text(HOOKS_YAML)
    return project


class Tools:
    """The tools of the fake conversations, recording what they were called with."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def shell(self, command: str) -> str:
        self.calls.append(("shell", {"command": command}))
        return f"ran {command}"

    def echo(self, text: str) -> str:
        self.calls.append(("echo", {"text": text}))
        return f"echo: {text}"

    def deploy(self, text: str) -> str:
        """A tool every call of which a hook asks a person about."""
        self.calls.append(("deploy", {"text": text}))
        return f"deployed {text}"

    def fragile(self, text: str) -> str:
        self.calls.append(("fragile", {"text": text}))
        return "fragile ran"

    def research(self, question: str) -> str:
        """A tool that hands the question to another agent (here, a canned one)."""
        self.calls.append(("research", {"question": question}))
        if "SECRET" in question:
            return "the answer is SECRET"
        return f"researched: {question}"

    def broken(self, text: str) -> str:
        self.calls.append(("broken", {"text": text}))
        raise RuntimeError("the tool broke")


@pytest.fixture
def tools() -> Tools:
    return Tools()


async def cancel_when_started(run: Coroutine[Any, Any, Any], started: asyncio.Event) -> None:
    """Start `run`, cancel it once `started` is set, and see the cancellation come out."""
    task = asyncio.ensure_future(run)
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
