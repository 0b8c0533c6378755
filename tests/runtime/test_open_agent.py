"""Opening a session: a broken agent file stops the run before anything is written or run."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookgate.errors import ConfigError
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
