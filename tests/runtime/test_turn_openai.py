"""Whole turns through the real `openai` client against a loopback chat-completions server.

The model streams, calls tools, reads their results in the next request, and hooks
written as real scripts run in between.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookgate.runtime.turn import Answered, run_turn
from runtime.conftest import OpenAgent
from runtime.project import (
    Project,
    RecordingView,
    assert_tool_calls_answered,
    chat_messages,
    read_log,
    served_model,
)
from support.chat_server import ChatServer, ServedReply, ServedToolCall

pytestmark = pytest.mark.anyio

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


async def test_streamed_answer_reaches_the_view_in_pieces_and_the_history_whole(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    project.write_agent(served_model(chat_server.url), system="Be brief.")
    chat_server.queue(ServedReply(text="Paris is the capital of France.", pieces=4))
    agent = await open_project_agent()
    view = RecordingView()

    outcome = await run_turn(agent, "What is the capital of France?", view)

    assert outcome == Answered("Paris is the capital of France.")
    assert len(view.deltas) == 4
    assert "".join(view.deltas) == "Paris is the capital of France."
    (request,) = chat_server.requests
    assert request.body["stream"] is True
    assert request.body["model"] == "test"
    assert chat_messages(request.body) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    assert [(m["role"], m["content"]) for m in project.messages()] == [
        ("user", "What is the capital of France?"),
        ("assistant", "Paris is the capital of France."),
    ]


async def test_tool_call_runs_and_its_result_goes_back_in_the_next_request(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    (project.dir / "notes.txt").write_text("buy milk\n")
    project.write_agent(served_model(chat_server.url), yolo=True)
    chat_server.queue(
        ServedReply(
            text="Let me look.",
            tool_calls=[
                ServedToolCall("read_file", {"path": "notes.txt"}, id="call_read"),
                ServedToolCall("shell", {"command": "echo done > ran.txt"}, id="call_shell"),
            ],
        ),
        ServedReply(text="The notes say: buy milk."),
    )
    agent = await open_project_agent()
    view = RecordingView()

    outcome = await run_turn(agent, "What do my notes say?", view)

    assert outcome == Answered("The notes say: buy milk.")
    assert (project.dir / "ran.txt").read_text() == "done\n"
    assert [call.name for call in view.started] == ["read_file", "shell"]
    first, second = chat_server.requests
    assert {tool["function"]["name"] for tool in first.body["tools"]} >= {"read_file", "shell"}
    messages = chat_messages(second.body)
    assert_tool_calls_answered(messages)
    assistant = messages[2]
    assert assistant["role"] == "assistant"
    assert [call["id"] for call in assistant["tool_calls"]] == ["call_read", "call_shell"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"path": "notes.txt"}
    tool_messages = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert "buy milk" in tool_messages["call_read"]
    assert "[no output]" in tool_messages["call_shell"]


async def test_hooks_see_each_step_of_a_turn_in_order(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    project.write_agent(
        served_model(chat_server.url), yolo=True, hooks=project.record_every_event(log)
    )
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("shell", {"command": "echo hi"}, id="call_1")]),
        ServedReply(text="It printed hi."),
    )
    agent = await open_project_agent()

    outcome = await run_turn(agent, "Say hi with the shell.", RecordingView())

    assert outcome == Answered("It printed hi.")
    events = read_log(log)
    assert [e["event"] for e in events] == [
        "sessionStart", "preGeneration", "preToolCall", "postToolCall", "postGeneration",
    ]  # fmt: skip
    start, pre, pre_tool, post_tool, post = events
    assert start["source"] == "startup"
    assert {e["session_id"] for e in events} == {agent.session_id}
    assert pre["prompt"] == "Say hi with the shell."
    assert pre_tool["tool"] == "shell"
    assert pre_tool["arguments"] == {"command": "echo hi"}
    assert post_tool["result"] == {"content": "hi", "is_error": False}
    assert post["outcome"] == "answered"
    assert post["answer"] == "It printed hi."


async def test_example_hooks_guard_and_scrub_between_model_and_tools(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    (project.dir / "build").mkdir()
    (project.dir / "secrets.env").write_text(f"aws_access_key_id = {AWS_KEY}\n")
    project.write_agent(
        served_model(chat_server.url),
        yolo=True,
        hooks={
            "preToolCall": [
                {"name": "no-rm-rf", "matcher": "^shell$", "onError": "fail",
                 "command": project.example("guard-rm-rf.sh")},
            ],
            "postToolCall": [{"name": "scrub", "command": project.example("scrub_aws_keys.py")}],
        },
    )  # fmt: skip
    chat_server.queue(
        ServedReply(
            tool_calls=[
                ServedToolCall("shell", {"command": "rm -rf build"}, id="call_rm"),
                ServedToolCall("read_file", {"path": "secrets.env"}, id="call_read"),
            ]
        ),
        ServedReply(text="I left build alone and the key is redacted."),
    )
    agent = await open_project_agent()
    view = RecordingView()

    outcome = await run_turn(agent, "Clean up and show me secrets.env.", view)

    assert isinstance(outcome, Answered)
    assert (project.dir / "build").is_dir()
    messages = chat_messages(chat_server.requests[1].body)
    tools = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert tools["call_rm"].startswith("[denied by a hook: rm -rf is not allowed")
    assert "[REDACTED_KEY]" in tools["call_read"]
    assert AWS_KEY not in chat_server.sent_text()
    assert "scrub: AWS credentials scrubbed from the tool output" in view.notices
