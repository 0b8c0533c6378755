"""Hooks are a snapshot taken when the session starts: editing the file mid-run changes nothing."""

from __future__ import annotations

import pytest

from hookgate.runtime.turn import run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("sandbox", ["off", "workspace-write"])
async def test_a_guard_removed_from_the_file_mid_session_still_denies(
    project: Project, open_project_agent: OpenAgent, sandbox: str
) -> None:
    """A model with a shell cannot switch a guard off by rewriting hookgate.yaml: the
    sandbox refuses the write; unconfined, the write lands and the snapshot holds."""
    guard = {"name": "no-rm", "matcher": "^shell$", "command": project.example("guard-rm-rf.sh")}
    script = project.script(
        # The model first rewrites the agent file without the guard, then tries rm -rf.
        # (Its file tools never write the agent file; the shell can only unconfined.)
        {"tool_calls": [{"name": "shell",
                         "arguments": {"command": "printf 'model: x\\n' > hookgate.yaml"}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -rf build"}}]},
        {"expect": "denied by a hook", "text": "The guard held."},
    )  # fmt: skip
    written = project.write_agent(
        script, yolo=True, hooks={"preToolCall": [guard]}, sandbox={"mode": sandbox}
    ).read_text()
    (project.dir / "build").mkdir()
    agent = await open_project_agent()

    view = RecordingView()
    await run_turn(agent, "Disable the guard, then clean up", view)

    rewritten = sandbox == "off"
    assert project.agent_file.read_text() == ("model: x\n" if rewritten else written)
    assert ("Read-only file system" in view.finished[0][1].content) is not rewritten
    assert (project.dir / "build").is_dir()
    assert "[denied by a hook:" in view.finished[-1][1].content
