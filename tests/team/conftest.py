"""Fixtures of the team tests: a supervisor (the project's agent) and two members, a
reviewer and a tester, each in a folder of its own and run as a real `hookgate` child.

Members' hooks are absolute: they run in the supervisor's project directory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from handoff.conftest import AgentDir, open_asker
from runtime.conftest import anyio_backend, project
from runtime.project import HOOKGATE, Project
from support.acp_client import AcpPeer, RecordingClient, acp_peer

__all__ = ["anyio_backend", "open_asker", "project"]

MEMBERS = ("reviewer", "tester")


@pytest.fixture
def reviewer(project: Project) -> AgentDir:
    return AgentDir(project.dir.parent / "reviewer")


@pytest.fixture
def tester(project: Project) -> AgentDir:
    return AgentDir(project.dir.parent / "tester")


@pytest.fixture
def supervisor(project: Project) -> AgentDir:
    return AgentDir(project.dir)


def team_entry(reviewer: AgentDir, tester: AgentDir, **options: Any) -> dict[str, Any]:
    """The supervisor file's `team:` naming the two members."""
    return {
        "name": "release",
        "members": {
            "reviewer": {"file": str(reviewer.file), "description": "reviews diffs"},
            "tester": {"file": str(tester.file), "description": "runs the tests"},
        },
        **options,
    }


def create(subject: str, member: str | None = None, description: str = "") -> dict[str, Any]:
    arguments: dict[str, Any] = {"subject": subject, "description": description or subject}
    if member is not None:
        arguments["member"] = member
    return {"name": "create_task", "arguments": arguments}


def calls(*tool_calls: Mapping[str, Any]) -> dict[str, Any]:
    return {"tool_calls": list(tool_calls)}


WAIT: dict[str, Any] = {"name": "wait_for_tasks", "arguments": {}}


StartAcp = Callable[[RecordingClient], AbstractAsyncContextManager[AcpPeer]]


@pytest.fixture
def start_acp(project: Project, tmp_path: Path) -> StartAcp:
    """`async with start_acp(client) as peer`: `hookgate acp` on the trusted supervisor."""

    def start(client: RecordingClient) -> AbstractAsyncContextManager[AcpPeer]:
        project.trust()
        return acp_peer(HOOKGATE, project.dir, project.env(), tmp_path / "acp.stderr", client)

    return start
