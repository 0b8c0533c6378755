"""Fixtures of the hand-off tests: an asking project and an asked agent, each its own.

The asking agent is the runtime tests' `project`; the asked agent lives in a folder of
its own next to it, with its own file, scripted model and hooks, and runs as a real
`hookgate` child process. Hook commands are absolute: every agent's hooks run in the
asking project's directory, where the hand-off happens.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.agent import AgentSession, open_agent
from hookgate.runtime.consent import AlwaysDeny
from hookgate.store.session import SessionStore
from runtime.conftest import anyio_backend, chat_server, project
from runtime.project import Project

__all__ = ["anyio_backend", "chat_server", "project"]

#: Seconds a child may take to reach a given point on a loaded machine.
START_WAIT_S = 20.0


@dataclass
class AgentDir:
    """An agent's own folder: its file, its scripted model, its hook scripts."""

    dir: Path

    @property
    def file(self) -> Path:
        return self.dir / "hookgate.yaml"

    def write(self, *replies: Mapping[str, Any], **settings: Any) -> Path:
        """Write the script and the agent file (`model: scripted:script.yaml`)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "script.yaml").write_text(json.dumps(list(replies), indent=2))
        document = {"model": "scripted:script.yaml", **settings}
        self.file.write_text(json.dumps(document, indent=2))
        return self.file

    def hook(self, name: str, body: str) -> dict[str, Any]:
        """An executable `sh` hook entry named `name`, by absolute path."""
        path = self.dir / "hooks" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
        return {"name": name, "args": [str(path)]}  # exec form: $PPID is the agent

    def recorder(
        self, name: str, log: Path, reply: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A hook appending its stdin (one line a run) to `log`, answering `reply` if given."""
        answer = f"echo {_sh_quote(json.dumps(reply))}" if reply is not None else "true"
        return self.hook(name, f'{{ cat; echo; }} >> "{log}"\n{answer}')


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


@dataclass
class Display:
    """An `AskDisplay` that keeps what the user would have seen."""

    shows_answer = True

    notices: list[str] = field(default_factory=list)
    streamed: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def asked_text(self, agent: str, delta: str) -> None:
        self.streamed.append(delta)

    def asked_done(self, agent: str) -> None:
        self.done.append(agent)

    @property
    def shown(self) -> str:
        return "".join(self.streamed)


@pytest.fixture
def asked(project: Project) -> AgentDir:
    """The asked agent's folder, outside the asking project."""
    return AgentDir(project.dir.parent / "helper")


@pytest.fixture
def asker(project: Project) -> AgentDir:
    """The asking agent's folder: the project itself."""
    return AgentDir(project.dir)


def agents_entry(asked: AgentDir, **options: Any) -> dict[str, Any]:
    """The asking file's `agents:` mapping naming `asked` as "helper"."""
    return {"helper": {"file": str(asked.file), "description": "knows the plan", **options}}


OpenAsker = Callable[..., Awaitable[AgentSession]]


@pytest.fixture
async def open_asker(project: Project) -> AsyncIterator[OpenAsker]:
    """`await open_asker(display)`: the project's agent, its hand-offs shown on `display`."""
    opened: list[AgentSession] = []

    async def open_(display: Any = None, **kwargs: Any) -> AgentSession:
        project.trust()
        agent = await open_agent(
            project.agent_file, notify=lambda text: None, consent=AlwaysDeny(),
            store=SessionStore(project.home), ask_display=display, **kwargs,
        )  # fmt: skip
        opened.append(agent)
        return agent

    yield open_
    for agent in opened:
        await agent.aclose()


def read_log(log: Path) -> list[dict[str, Any]]:
    """The JSON objects a recorder hook appended to `log`, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


async def wait_for_pid(path: Path) -> int:
    """The pid a hook wrote to `path`, once it is there."""
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        pid = _written_pid(path)
        if pid is not None:
            return pid
        await asyncio.sleep(0.02)
    pytest.fail(f"nothing wrote a pid to {path}")


def wait_for_pid_file(path: Path) -> int:
    """`wait_for_pid`, blocking: for tests that drive a subprocess, not an event loop."""
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        pid = _written_pid(path)
        if pid is not None:
            return pid
        time.sleep(0.02)
    pytest.fail(f"nothing wrote a pid to {path}")


def _written_pid(path: Path) -> int | None:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    return int(text) if text.endswith("\n") else None
