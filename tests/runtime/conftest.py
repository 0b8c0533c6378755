"""Fixtures for the runtime tests: a scratch project, a loopback model server, open agents."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.agent import AgentSession, open_agent
from hookgate.runtime.consent import AlwaysDeny
from hookgate.store.session import SessionStore
from runtime.project import Project
from support.chat_server import ChatServer

OpenAgent = Callable[..., Awaitable[AgentSession]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """An empty project, made the working directory, with `$HOOKGATE_HOME` inside tmp_path."""
    directory = (tmp_path / "project").resolve()
    directory.mkdir()
    home = tmp_path / "home"
    monkeypatch.chdir(directory)
    monkeypatch.setenv("HOOKGATE_HOME", str(home))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return Project(directory, home)


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    with ChatServer() as server:
        yield server


@pytest.fixture
async def open_project_agent(project: Project) -> AsyncIterator[OpenAgent]:
    """`await open_project_agent(consent=..., notify=..., **open_agent_kwargs)`.

    Opens the project's agent file with its sessions under the project's home; the
    consent defaults to denying everything, as `-p` does without a terminal.
    """
    opened: list[AgentSession] = []

    async def open_(**kwargs: Any) -> AgentSession:
        kwargs.setdefault("consent", AlwaysDeny())
        kwargs.setdefault("notify", lambda text: None)
        project.trust()
        agent = await open_agent(project.agent_file, store=SessionStore(project.home), **kwargs)
        opened.append(agent)
        return agent

    yield open_
    for agent in opened:
        await agent.aclose()
