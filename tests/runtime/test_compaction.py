"""Context compression: old turns summarised for the model, through a path no hook sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.history import SUMMARY_ACK, SUMMARY_NOTE, SUMMARY_REQUEST
from hookgate.runtime.turn import Answered, run_turn
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
    # The summary request runs no hook; preCompact fires before it (Claude's PreCompact).
    turns = ["preGeneration", "postGeneration"] * 3
    assert events == ["sessionStart", *turns, "preGeneration", "preCompact", "postGeneration"]
    on_disk = [m["content"] for m in project.messages()]
    assert on_disk == [text for n in (1, 2, 3, 4) for text in (f"Question {n}", f"Answer {n}.")]
    kinds = [r["kind"] for r in project.records() if r.get("type") == "event"]
    assert kinds == ["compacted"]


def question(n: int) -> str:
    return f"Question {n}".ljust(50, ".")


def answer(n: int) -> str:
    return f"Answer {n}".ljust(50, ".")


def summary_requests(server: ChatServer) -> list[list[dict[str, Any]]]:
    sent = [chat_messages(request.body) for request in server.requests]
    return [messages for messages in sent if messages[-1]["content"] == SUMMARY_REQUEST]


async def test_a_resumed_session_starts_from_its_saved_summary(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    """Six turns of 100 characters pass the budget of 500 once; resumed, the summary is
    read back, so turn 7 fits and turn 8 summarises the summary and what came after."""
    project.write_agent(served_model(chat_server.url), context_budget=500)
    chat_server.queue(
        *(ServedReply(text=answer(n)) for n in range(1, 6)),
        ServedReply(text="S1"),
        *(ServedReply(text=answer(n)) for n in (6, 7)),
        ServedReply(text="S2"),
        ServedReply(text=answer(8)),
    )
    first = await open_project_agent()
    for n in range(1, 7):
        await run_turn(first, question(n), RecordingView())
    await first.aclose()
    assert len(summary_requests(chat_server)) == 1

    resumed = await open_project_agent(continue_last=True)
    for n in (7, 8):
        assert await run_turn(resumed, question(n), RecordingView()) == Answered(answer(n))

    _, second = summary_requests(chat_server)
    summarised = [m["content"] for m in second[1:-1]]
    assert summarised[:3] == [SUMMARY_NOTE + "S1", SUMMARY_ACK, answer(3)]
    assert question(1) not in summarised
    last = [m["content"] for m in chat_messages(chat_server.requests[-1].body)]
    assert last[1:] == [SUMMARY_NOTE + "S2", SUMMARY_ACK, *last[3:]]
    assert last[-1] == question(8)
    compactions = [r["data"] for r in project.records() if r.get("kind") == "compacted"]
    assert [(c["summary"], c["kept"]) for c in compactions] == [("S1", 6), ("S2", 6)]
