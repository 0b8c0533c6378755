"""An editor's session over ACP runs the shell in the same sandbox as `-p` does."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.project import Project
from support.acp_client import RecordingClient, StartPeer

pytestmark = pytest.mark.anyio


async def test_a_shell_call_over_acp_writes_only_in_the_workspace(
    project: Project, start_peer: StartPeer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    command = f"echo in > inside.txt; echo out > {outside}"
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
        {"expect": "Read-only file system", "text": "Done."},
    )
    project.write_agent(model, yolo=True)

    async with start_peer(RecordingClient()) as peer:
        session = await peer.new_session()
        response = await peer.prompt(session, "Write both.")

    assert response.stop_reason == "end_turn"
    assert (project.dir / "inside.txt").read_text() == "in\n"
    assert not outside.exists()
