"""Context compression: old turns summarised for the model, through a path no hook sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookgate.history import SUMMARY_REQUEST
from hookgate.turn import Answered, run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView, chat_messages, read_log, served_model
from support.chat_server import ChatServer, ServedReply

pytestmark = pytest.mark.anyio


async def test_summary_is_asked_without_tools_or_hooks_and_the_file_keeps_everything(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    project.write_agent(
        served_model(chat_server.url),
        context_budget=50,
        hooks=project.record_every_event(log),
    )
    chat_server.queue(
        *(ServedReply(text=f"Answer {n}.") for n in (1, 2, 3)),
        ServedReply(text="SUMMARY: the user asked three questions."),
        ServedReply(text="Answer 4."),
    )
    agent = await open_project_agent()
    for n in (1, 2, 3):
        await run_turn(agent, f"Question {n}", RecordingView())
    view = RecordingView()

    outcome = await run_turn(agent, "Question 4", view)

    assert outcome == Answered("Answer 4.")
    assert "".join(view.deltas) == "Answer 4."
    summary_request, last = (r.body for r in chat_server.requests[3:])
    assert "tools" not in summary_request
    assert chat_messages(summary_request)[-1] == {"role": "user", "content": SUMMARY_REQUEST}
    sent = [m["content"] for m in chat_messages(last)]
    assert "SUMMARY: the user asked three questions." in sent[1]
    assert "Question 1" not in sent
    assert sent[-1] == "Question 4"
    events = [e["event"] for e in read_log(log)]
    assert events == ["sessionStart"] + ["preGeneration", "postGeneration"] * 4
    on_disk = [m["content"] for m in project.messages()]
    assert on_disk == [text for n in (1, 2, 3, 4) for text in (f"Question {n}", f"Answer {n}.")]
    kinds = [r["kind"] for r in project.records() if r.get("type") == "event"]
    assert kinds == ["compacted"]
