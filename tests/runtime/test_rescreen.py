"""A call runs on the state it was screened on: each call's preToolCall runs right before it.

The scripted model plays a hostile model that prepares, in one reply, the state a
later call of the same reply exploits.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookgate.runtime.turn import run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView

pytestmark = pytest.mark.anyio

#: A guard that denies any write whose real path is `important.txt` of the project.
REAL_PATH_GUARD = """python3 -c '
import json, os, sys
call = json.load(sys.stdin)
path = os.path.realpath(call["arguments"].get("path", ""))
if path == os.path.realpath("important.txt"):
    print(json.dumps({"action": "block", "reason": "important.txt is read-only"}))
'"""


def tool_answers(project: Project) -> list[str]:
    return [m["content"] for m in project.messages() if m["role"] == "tool"]


async def test_a_symlink_made_earlier_in_the_reply_does_not_slip_past_a_real_path_guard(
    project: Project, open_project_agent: OpenAgent
) -> None:
    important = project.dir / "important.txt"
    important.write_text("keep me")
    model = project.script(
        {"tool_calls": [
            {"name": "shell", "arguments": {"command": "ln -s important.txt notes.txt"}},
            {"name": "write_file", "arguments": {"path": "notes.txt", "content": "pwned"}},
        ]},
        {"text": "Done."},
    )  # fmt: skip
    guard = {"name": "real-path", "matcher": "^write_file$", "onError": "fail",
             "command": project.hook("guard", REAL_PATH_GUARD)}  # fmt: skip
    project.write_agent(model, yolo=True, hooks={"preToolCall": [guard]})
    agent = await open_project_agent()

    await run_turn(agent, "take notes", RecordingView())

    assert important.read_text() == "keep me"
    assert tool_answers(project)[1] == "[denied by a hook: important.txt is read-only]"


async def test_each_call_is_screened_once_for_the_record_and_once_before_it_runs(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    log = tmp_path / "pre.log"
    calls = [{"name": "read_file", "arguments": {"path": f"f{n}"}} for n in range(3)]
    model = project.script({"tool_calls": calls}, {"text": "Done."})
    project.write_agent(model, hooks={"preToolCall": [project.recorder(log)]})
    agent = await open_project_agent()

    await run_turn(agent, "read", RecordingView())

    paths = [line for line in log.read_text().splitlines() if line]
    order = [next(f"f{n}" for n in range(3) if f'"f{n}"' in line) for line in paths]
    # All up front (the record), then each call after the first again, right before it.
    assert order == ["f0", "f1", "f2", "f1", "f2"]


async def test_a_hooks_message_is_shown_once_per_call_though_the_call_is_screened_twice(
    project: Project, open_project_agent: OpenAgent
) -> None:
    calls = [{"name": "read_file", "arguments": {"path": f"f{n}"}} for n in range(2)]
    model = project.script({"tool_calls": calls}, {"text": "Done."})
    say = {"name": "say", "command": """echo '{"message": "reads are logged"}'"""}
    project.write_agent(model, hooks={"preToolCall": [say]})
    agent = await open_project_agent()
    view = RecordingView()

    await run_turn(agent, "read", view)

    assert view.notices.count("say: reads are logged") == 2  # one per call, not three
