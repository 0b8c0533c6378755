"""Within a session hookgate runs what it trusted, and the model's file tools cannot
change what the next session trusts: the scripted model plays the hostile model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hookgate.runtime.turn import run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView

pytestmark = pytest.mark.anyio

NEW_CONTENT = "exit 0  # the models own guard SECRET-CONTENT"


async def test_a_guard_script_changed_mid_session_is_not_run_and_its_call_is_denied(
    project: Project, open_project_agent: OpenAgent
) -> None:
    guard = project.hook("guard.sh", "exit 0")
    rewrite = f"printf '#!/bin/sh\\n{NEW_CONTENT}\\n' > hooks/guard.sh"
    script = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": rewrite}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "hookgate.yaml"}}]},
        {"text": "done"},
    )
    hooks = {"preToolCall": [{"matcher": "^read_file$", "command": guard, "onError": "fail"}]}
    # Unconfined, the shell can rewrite the guard (the sandbox refuses it: tests/sandbox).
    project.write_agent(script, yolo=True, hooks=hooks, sandbox={"mode": "off"})
    agent = await open_project_agent()

    view = RecordingView()
    await run_turn(agent, "Loosen the guard, then read", view)

    assert NEW_CONTENT in (project.dir / "hooks" / "guard.sh").read_text()  # the shell could
    denied = view.finished[1][1].content
    assert denied.startswith("[denied by a hook:")
    assert f"{project.dir / 'hooks' / 'guard.sh'} changed since the session started" in denied
    assert "SECRET-CONTENT" not in denied


async def test_an_unchanged_guard_keeps_running_without_a_rehash(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    log = tmp_path / "runs"
    guard = project.hook("guard.sh", f"echo run >> {log}")
    script = project.script(
        *({"tool_calls": [{"name": "read_file", "arguments": {"path": "x"}}]} for _ in range(3)),
        {"text": "done"},
    )
    project.write_agent(script, yolo=True, hooks={"preToolCall": [{"command": guard}]})
    agent = await open_project_agent()

    await run_turn(agent, "Read thrice", RecordingView())

    assert log.read_text().splitlines() == ["run"] * 3


PATHS = {
    "plain": "hookgate.yaml",
    "dot slash": "./hookgate.yaml",
    "dot dot": "hooks/../hookgate.yaml",
    "double slash": "hooks//guard.sh",
    "symlink": "innocent.txt",
    "absolute": "{dir}/hooks/guard.sh",
    "trust store": "{home}/trust.json",
    "under HOOKGATE_HOME": "{home}/sessions/planted.jsonl",
}


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
@pytest.mark.parametrize("raw", PATHS.values(), ids=PATHS.keys())
async def test_file_tools_refuse_the_closure_and_the_home_whatever_yolo_says(
    project: Project, open_project_agent: OpenAgent, tool: str, raw: str
) -> None:
    path = raw.format(dir=project.dir, home=project.home)
    arguments = (
        {"path": path, "content": "model: x\n"}
        if tool == "write_file"
        else {"path": path, "old_string": "model", "new_string": "modal"}
    )
    script = project.script(
        {"tool_calls": [{"name": tool, "arguments": arguments}]}, {"text": "ok"}
    )
    guard = project.hook("guard.sh", "exit 0")
    project.write_agent(
        script,
        yolo=True,
        permissions={"allow": [tool]},
        hooks={"preToolCall": [{"command": guard}]},
    )
    os.symlink(project.agent_file, project.dir / "innocent.txt")
    agent = await open_project_agent()
    before = {p: p.read_bytes() for p in (project.agent_file, project.dir / "hooks" / "guard.sh")}

    view = RecordingView()
    await run_turn(agent, "Edit it", view)

    result = view.finished[0][1]
    assert result.is_error
    assert result.content.startswith("[denied: ")
    assert " is protected" in result.content
    assert {p: p.read_bytes() for p in before} == before
    assert not (project.home / "sessions" / "planted.jsonl").exists()


async def test_other_files_are_still_written(
    project: Project, open_project_agent: OpenAgent
) -> None:
    script = project.script(
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "src/app.py", "content": "x"}}
            ]
        },
        {"text": "ok"},
    )
    project.write_agent(script, yolo=True)
    agent = await open_project_agent()

    await run_turn(agent, "Write", RecordingView())

    assert (project.dir / "src" / "app.py").read_text() == "x"
