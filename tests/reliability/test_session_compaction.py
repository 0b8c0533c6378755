"""Compaction across resumes: the summary is saved, so resuming costs no extra summaries.

Each summary is a model call over the whole old history; a resumed session that
summarised everything again on each resume past the budget paid that call on every
turn (quadratic cost with a real model).
"""

from __future__ import annotations

import pytest

from hookgate.history import SUMMARY_REQUEST
from hookgate.turn import Answered, run_turn
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
