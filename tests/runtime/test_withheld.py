"""A postToolCall hook under `onError: fail` that fails withholds the result from everyone.

The report's case: a scrubber that timed out let an AWS key reach the model and the
session file. The model is the real `openai` client against the loopback server, so
what the model received is read from the requests the server recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookgate.runtime.turn import run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView, served_model
from support.chat_server import ChatServer, ServedReply, ServedToolCall

pytestmark = pytest.mark.anyio

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


@pytest.mark.parametrize(
    "failure",
    ["sleep 5", "exit 3", "echo not-json-but-ok; kill -9 $$", "cat >&2; exit 3"],
    ids=["timeout", "exit-3", "killed", "crash-quoting-the-result"],
)
async def test_a_failed_scrubber_withholds_the_result(
    project: Project,
    chat_server: ChatServer,
    open_project_agent: OpenAgent,
    tmp_path: Path,
    failure: str,
) -> None:
    (project.dir / "creds.txt").write_text(f"aws_access_key_id = {AWS_KEY}\n")
    later = tmp_path / "later.log"
    scrubber = {"name": "scrub", "onError": "fail", "timeout": "300ms",
                "command": project.hook("scrub", failure)}  # fmt: skip
    hooks = {"postToolCall": [scrubber, project.recorder(later)],
             "postGeneration": [project.recorder(later)]}  # fmt: skip
    project.write_agent(served_model(chat_server.url), hooks=hooks)
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("read_file", {"path": "creds.txt"}, id="c1")]),
        ServedReply(text="I could not read it."),
    )
    agent = await open_project_agent()
    view = RecordingView()

    await run_turn(agent, "show creds.txt", view)

    (tool_message,) = [m for m in project.messages() if m["role"] == "tool"]
    assert tool_message["content"].startswith("[result withheld: hook 'scrub' failed]")
    requests = json.dumps([request.body for request in chat_server.requests])
    artifacts = {
        "model requests": requests,
        "session files": "".join(p.read_text() for p in project.files_under_home()),
        "later hooks' input": later.read_text() if later.exists() else "",
        "the screen": repr(view.finished),
    }
    for where, text in artifacts.items():
        assert AWS_KEY not in text, f"the key reached {where}"
