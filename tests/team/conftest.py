"""Fixtures of the team tests: a supervisor (the project's agent) and two members, a
reviewer and a tester, each in a folder of its own and run as a real `hookgate` child.

Members' hooks are absolute: they run in the supervisor's project directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from handoff.conftest import AgentDir, open_asker
from runtime.conftest import anyio_backend, project
from runtime.project import Project

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
