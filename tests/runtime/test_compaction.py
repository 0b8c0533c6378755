"""Context compression: old turns summarised for the model, through a path no hook sees."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hookgate.compaction import MAX_PIECES
from hookgate.history import SUMMARY_ACK, SUMMARY_NOTE, SUMMARY_REQUEST
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


SYSTEM = "Be brief."
#: What a request carries besides the conversation the budget counts.
REQUEST_OVERHEAD = len(SYSTEM) + len(SUMMARY_REQUEST)


def conversation_chars(body: Mapping[str, Any]) -> int:
    """Characters of a request's conversation: its messages but the system prompt and a
    summary request's closing question."""
    messages = chat_messages(body)
    if messages[-1]["content"] == SUMMARY_REQUEST:
        messages = messages[:-1]
    return sum(len(m["content"] or "") for m in messages if m["role"] != "system")


async def talk(agent: Any, numbers: range) -> None:
    for n in numbers:
        assert await run_turn(agent, question(n), RecordingView()) == Answered(answer(n))


async def test_a_session_far_past_its_budget_is_summarised_in_pieces_that_fit(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    """30 turns (3,000 characters) resumed with a budget of 400, against a model whose
    context holds 400 and no more: each summary request fits, each carries the summary
    so far (older summaries summarised again), and they are `MAX_PIECES` at most, the
    oldest left out with a marker. All at once, the one request would be refused."""
    project.write_agent(served_model(chat_server.url), system=SYSTEM, context_budget=100_000)
    chat_server.queue(*(ServedReply(text=answer(n)) for n in range(30)))
    first = await open_project_agent()
    await talk(first, range(30))
    await first.aclose()

    project.write_agent(served_model(chat_server.url), system=SYSTEM, context_budget=400)
    chat_server.context_chars = 400 + REQUEST_OVERHEAD
    chat_server.queue(*(ServedReply(text=f"S{n}") for n in range(MAX_PIECES)))
    chat_server.queue(ServedReply(text=answer(30)))
    since = len(chat_server.requests)
    resumed = await open_project_agent(continue_last=True)
    await talk(resumed, range(30, 31))

    sent = [request.body for request in chat_server.requests[since:]]
    asked = [body for body in sent if chat_messages(body)[-1]["content"] == SUMMARY_REQUEST]
    assert len(sent) == len(asked) + 1  # no request was refused
    assert 1 < len(asked) <= MAX_PIECES
    assert all(conversation_chars(body) <= 400 for body in sent), list(
        map(conversation_chars, sent)
    )
    first_piece = [m["content"] for m in chat_messages(asked[0])]
    assert first_piece[1].startswith(SUMMARY_NOTE + "[")
    assert "left out" in first_piece[1]
    for earlier, body in enumerate(asked[1:]):
        assert chat_messages(body)[1]["content"] == f"{SUMMARY_NOTE}S{earlier}"
    last = [m["content"] for m in chat_messages(sent[-1])]
    assert last[1] == f"{SUMMARY_NOTE}S{len(asked) - 1}"
    assert last[-1] == question(30)


async def test_a_refused_summary_leaves_the_oldest_turns_out_and_is_not_asked_again(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    """The summary request is refused: the turn leaves the oldest turns out, with a
    marker, and sends no more than the budget (not every message); a notice says why.
    Later compactions ask in requests at most half the refused one's size."""
    project.write_agent(served_model(chat_server.url), system=SYSTEM, context_budget=500)
    refusal = "This model's maximum context length is 200 characters"
    chat_server.queue(
        *(ServedReply(text=answer(n)) for n in range(1, 6)),
        ServedReply.http_error(400, json.dumps({"error": {"message": refusal}})),
        ServedReply(text=answer(6)),
    )
    notices: list[str] = []
    agent = await open_project_agent(notify=notices.append)
    await talk(agent, range(1, 7))

    sent = [request.body for request in chat_server.requests]
    refused, sixth = sent[5], sent[6]
    assert chat_messages(refused)[-1]["content"] == SUMMARY_REQUEST
    assert conversation_chars(sixth) <= 500
    contents = [m["content"] for m in chat_messages(sixth)]
    assert contents[1].startswith(SUMMARY_NOTE), contents[1]
    assert "left out" in contents[1], contents[1]
    assert question(1) not in contents
    assert contents[-1] == question(6)
    assert any("could not summarise older turns" in text and refusal in text for text in notices)

    chat_server.queue(*(ServedReply(text="r" * 50) for _ in range(30)))
    for n in range(7, 14):
        assert isinstance(await run_turn(agent, question(n), RecordingView()), Answered)
    later = [request.body for request in chat_server.requests[7:]]
    asked = [body for body in later if chat_messages(body)[-1]["content"] == SUMMARY_REQUEST]
    assert asked  # compacted again, by summary
    sizes = [conversation_chars(body) for body in asked]
    assert all(size <= conversation_chars(refused) // 2 for size in sizes), (
        sizes,
        conversation_chars(refused),
    )
    assert all(conversation_chars(body) <= 500 for body in later)
    compactions = [r["data"] for r in project.records() if r.get("kind") == "compacted"]
    assert [c["summarised"] for c in compactions] == [False] + [True] * (len(compactions) - 1)
