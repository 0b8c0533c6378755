"""Opening a session: a broken agent file stops the run before anything is written or run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hookgate.errors import ConfigError
from hookgate.store.session import SessionStore
from runtime.conftest import OpenAgent
from runtime.project import Project

pytestmark = pytest.mark.anyio


async def test_a_broken_model_script_leaves_no_session_file_and_runs_no_hook(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    log = tmp_path / "start.log"
    (project.dir / "script.yaml").write_text("- txet: typo\n")
    project.write_agent("scripted:script.yaml", hooks={"sessionStart": [project.recorder(log)]})

    with pytest.raises(ConfigError, match=r"script\.yaml:1"):
        await open_project_agent()

    assert not log.exists()
    assert project.session_files() == []


async def test_continue_resumes_this_agents_session_not_a_newer_one_of_another_agent(
    project: Project, open_project_agent: OpenAgent
) -> None:
    """An asked agent keeps its sessions in the same store and directory: `-c` after a
    hand-off must not pick the asked agent's conversation up."""
    project.write_agent("scripted:script.yaml")
    (project.dir / "script.yaml").write_text("- text: hello\n")
    store = SessionStore(project.home)
    mine = store.create(agent_file=str(project.agent_file), cwd=str(project.dir))
    asked = store.create(agent_file=str(project.dir / "reviewer.yaml"), cwd=str(project.dir))
    os.utime(mine.path, (1_000, 1_000))
    os.utime(asked.path, (2_000, 2_000))

    agent = await open_project_agent(continue_last=True)

    assert agent.session_id == mine.id
