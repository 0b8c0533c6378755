"""A secret in a blocked question goes nowhere: not to disk, hooks, the model or a notice.

Two turns: the first question holds an API key and the redactor example blocks it; the
second is an ordinary question, whose request carries the conversation so far. Every
hook of every event records its stdin; the redactor runs first on preGeneration, so
only the hook whose job is to read the question ever sees it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.turn import Answered, PromptBlocked, run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView, chat_messages, read_log, served_model
from support.chat_server import ChatServer, ServedReply

pytestmark = pytest.mark.anyio

SECRET = "sk-testQ9w8E7r6T5y4U3i2O1p0"
BLOCKED = f"Call the API with my key {SECRET} please"
MARKER = "[prompt blocked by a hook: the question holds an OpenAI-style API key]"


def guarded_agent(project: Project, server: ChatServer, log: Path) -> None:
    redactor = {"name": "redact", "command": project.example("redact_prompt.py")}
    hooks = project.record_every_event(log, {"preGeneration": [redactor]})
    project.write_agent(served_model(server.url), hooks=hooks)


def assert_secret_nowhere(project: Project, server: ChatServer, log: Path, shown: str) -> None:
    holding = [p for p in project.files_under_home() if SECRET.encode() in p.read_bytes()]
    assert holding == [], f"files under $HOOKGATE_HOME hold the secret: {holding}"
    assert SECRET not in log.read_text(), "a hook received the secret"
    assert SECRET not in server.sent_text(), "a request to the model holds the secret"
    assert SECRET not in shown, "a notice shows the secret"


def assert_the_marker_travelled(server: ChatServer, log: Path) -> None:
    """The blocked turn is still visible, as its marker, to the post hooks and the model."""
    events = read_log(log)
    blocked_post = next(e for e in events if e["event"] == "postGeneration")
    assert blocked_post["prompt"] == MARKER
    assert blocked_post["outcome"] == "blocked"
    assert [e["event"] for e in events].count("preGeneration") == 1  # the second turn's
    (request,) = server.requests
    contents = [m["content"] for m in chat_messages(request.body)]
    assert contents[1:] == [
        MARKER,
        "Your question was not sent: it holds a secret. Remove the key and ask again.",
        "What can you do?",
    ]


async def test_secret_in_a_blocked_question_leaks_nowhere_over_two_turns(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    guarded_agent(project, chat_server, log)
    chat_server.queue(ServedReply(text="I can read and edit files."))
    notices: list[str] = []
    agent = await open_project_agent(notify=notices.append)
    views = [RecordingView(), RecordingView()]

    first = await run_turn(agent, BLOCKED, views[0])
    second = await run_turn(agent, "What can you do?", views[1])

    assert isinstance(first, PromptBlocked)
    assert second == Answered("I can read and edit files.")
    shown: list[Any] = [*notices, *views[0].notices, *views[1].notices, *views[1].deltas]
    assert_secret_nowhere(project, chat_server, log, "\n".join(shown))
    assert_the_marker_travelled(chat_server, log)


def test_secret_in_a_blocked_question_leaks_nowhere_across_print_mode_runs(
    project: Project, chat_server: ChatServer, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    guarded_agent(project, chat_server, log)
    chat_server.queue(ServedReply(text="I can read and edit files."))

    first = project.hookgate("-p", BLOCKED)
    second = project.hookgate("--continue", "-p", "What can you do?")

    assert first.returncode == 2, first.stderr
    assert (
        first.stdout
        == "Your question was not sent: it holds a secret. Remove the key and ask again.\n"
    )
    assert (second.returncode, second.stdout) == (0, "I can read and edit files.\n"), second.stderr
    shown = first.stderr + second.stderr
    assert_secret_nowhere(project, chat_server, log, shown)
    assert_the_marker_travelled(chat_server, log)
