"""Fixtures for the ACP tests: a scratch project, and `hookgate acp` driven by the ACP client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest

from runtime.conftest import anyio_backend, chat_server, project
from runtime.project import HOOKGATE, Project
from support.acp_client import AcpPeer, RecordingClient, StartPeer, acp_peer

__all__ = ["anyio_backend", "chat_server", "project"]


@pytest.fixture
def stderr_file(tmp_path: Path) -> Path:
    return tmp_path / "acp.stderr"


@pytest.fixture
def start_peer(project: Project, stderr_file: Path) -> StartPeer:
    """`async with start_peer(client=...) as peer`: `hookgate acp` in the project."""

    def start(
        client: RecordingClient | None = None, *, trusted: bool = True
    ) -> AbstractAsyncContextManager[AcpPeer]:
        if trusted:
            project.trust()
        return acp_peer(HOOKGATE, project.dir, project.env(), stderr_file, client)

    return start


@pytest.fixture
async def peer(start_peer: StartPeer) -> AsyncIterator[AcpPeer]:
    async with start_peer() as running:
        yield running
