"""Compaction across resumes: the summary is saved, so resuming costs no extra summaries.

Each summary is a model call over the whole old history; a resumed session that
summarised everything again on each resume past the budget paid that call on every
turn (quadratic cost with a real model).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from hookgate.runtime.compaction import MAX_PIECES
from hookgate.runtime.history import SUMMARY_NOTE, SUMMARY_REQUEST
from hookgate.runtime.turn import Answered, run_turn
from reliability.profile import scale
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView, chat_messages, served_model
from support.chat_server import ChatServer, ServedReply

#: Turns of each run: compaction sets in at the sixth, then every second turn.
TURNS = scale(12, 60)
#: Characters of each question and each reply: a turn adds 100 to the history.
TEXT = 50
BUDGET = 500


def summaries(server: ChatServer, since: int) -> int:
    sent = [chat_messages(request.body) for request in server.requests[since:]]
    return sum(messages[-1]["content"] == SUMMARY_REQUEST for messages in sent)


@pytest.mark.anyio
@pytest.mark.reliability("session")
async def test_resuming_every_turn_summarises_no_more_than_one_long_session(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    """A session resumed before every turn asks for as many summaries as the same session never closed."""
    project.write_agent(served_model(chat_server.url), context_budget=BUDGET)
    chat_server.queue(*(ServedReply(text="r" * TEXT) for _ in range(4 * TURNS)))
    questions = [f"Question {n}".ljust(TEXT, ".") for n in range(TURNS)]

    agent = await open_project_agent()
    for text in questions:
        assert isinstance(await run_turn(agent, text, RecordingView()), Answered)
    await agent.aclose()
    in_one_go = summaries(chat_server, 0)

    since = len(chat_server.requests)
    for index, text in enumerate(questions):
        agent = await open_project_agent(continue_last=index > 0)
        assert isinstance(await run_turn(agent, text, RecordingView()), Answered)
        await agent.aclose()
    resumed = summaries(chat_server, since)

    assert 0 < in_one_go < TURNS // 2
    assert resumed == in_one_go
    assert len(project.session_files()) == 2


def question(n: int) -> str:
    return f"Question {n}".ljust(50, ".")


def answer(n: int) -> str:
    return f"Answer {n}".ljust(50, ".")


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


@pytest.mark.anyio
@pytest.mark.reliability("session")
async def test_a_session_far_past_its_budget_is_summarised_in_pieces_that_fit(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    """A 3,000-character session resumed with a budget of 400, the model's context 400: every summary request fits, older summaries summarised again.

    30 turns (3,000 characters) resumed with a budget of 400, against a model whose
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


@pytest.mark.anyio
@pytest.mark.reliability("session")
async def test_a_refused_summary_leaves_the_oldest_turns_out_and_is_not_asked_again(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    """A refused summary: the turn leaves the oldest turns out with a marker, within the budget, and the refused request is never sent again.

    The summary request is refused: the turn leaves the oldest turns out, with a
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
