"""How a turn ends when it does not simply answer: model failures and cancellation.

Whatever the ending, postGeneration runs and is told the outcome, and the history on
disk still holds the user's question.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.turn import (
    Answered,
    Cancelled,
    PromptBlocked,
    TurnFailed,
    TurnOutcome,
    run_turn,
)
from hookgate.view import NoticeKind
from runtime.conftest import OpenAgent
from runtime.project import (
    Project,
    RecordingView,
    assert_tool_calls_answered,
    read_log,
    served_model,
)
from support.chat_server import ChatServer, ServedReply, ServedToolCall

pytestmark = pytest.mark.anyio

ModelSetup = Callable[[Project, ChatServer, str], Any]


@pytest.fixture
def refusing_url() -> Iterator[str]:
    """A loopback URL that refuses connections: the port is bound but never listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def refused(project: Project, server: ChatServer, refusing_url: str) -> Any:
    return served_model(refusing_url)


def http_500(project: Project, server: ChatServer, refusing_url: str) -> Any:
    server.queue(ServedReply.http_error(500, '{"error": {"message": "the GPU caught fire"}}'))
    return served_model(server.url)


def malformed_arguments(project: Project, server: ChatServer, refusing_url: str) -> Any:
    server.queue(ServedReply(tool_calls=[ServedToolCall("read_file", '{"path": "a.txt"')]))
    return served_model(server.url)


def script_runs_out(project: Project, server: ChatServer, refusing_url: str) -> Any:
    return project.script({"tool_calls": [{"name": "list_files", "arguments": {"pattern": "*"}}]})


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (refused, "connection refused"),
        (http_500, "answered HTTP 500: the GPU caught fire"),
        (malformed_arguments, "malformed JSON arguments for tool 'read_file'"),
        (script_runs_out, "the scripted model has no reply left"),
    ],
    ids=["refused", "http-500", "malformed-tool-json", "script-ran-out"],
)
async def test_model_failure_ends_the_turn_with_a_clear_message(
    project: Project,
    chat_server: ChatServer,
    open_project_agent: OpenAgent,
    refusing_url: str,
    tmp_path: Path,
    setup: ModelSetup,
    message: str,
) -> None:
    log = tmp_path / "post.log"
    model = setup(project, chat_server, refusing_url)
    project.write_agent(model, hooks={"postGeneration": [project.recorder(log)]})
    agent = await open_project_agent()
    view = RecordingView()

    outcome = await run_turn(agent, "Please help", view)

    assert isinstance(outcome, TurnFailed)
    assert message in outcome.message
    assert "\n" not in outcome.message
    assert view.notices == [f"model error: {outcome.message}"]
    assert view.kinds == [NoticeKind.ERROR]  # shown as an error, not a hook's message
    (post,) = read_log(log)
    assert (post["outcome"], post["prompt"], post["answer"]) == ("error", "Please help", None)
    on_disk = project.messages()
    assert on_disk[0] == {"role": "user", "content": "Please help"}
    assert [m.to_json() for m in agent.history.messages] == on_disk
    assert_tool_calls_answered(on_disk)


async def test_the_next_turn_after_a_failure_carries_the_intact_history(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    project.write_agent(served_model(chat_server.url))
    chat_server.queue(ServedReply.http_error(503, "busy"), ServedReply(text="Now I can."))
    agent = await open_project_agent()

    failed = await run_turn(agent, "First try", RecordingView())
    second = await run_turn(agent, "Second try", RecordingView())

    assert isinstance(failed, TurnFailed)
    assert second == Answered("Now I can.")
    sent = [m["content"] for m in chat_server.requests[1].body["messages"]]
    assert sent[1:] == ["First try", "Second try"]


async def test_cancelled_turn_runs_post_generation_and_answers_the_interrupted_call(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    started = project.dir / "started"
    model = project.script(
        {"tool_calls": [
            {"name": "shell", "arguments": {"command": f"touch {started}; sleep 30"}},
            {"name": "shell", "arguments": {"command": "touch never"}},
        ]},
    )  # fmt: skip
    project.write_agent(model, yolo=True, hooks={"postGeneration": [project.recorder(log)]})
    agent = await open_project_agent()
    turn = asyncio.ensure_future(run_turn(agent, "Run it", RecordingView()))
    async with asyncio.timeout(20):
        while not started.exists():  # noqa: ASYNC110 - another process makes it: poll
            await asyncio.sleep(0.02)

    turn.cancel()
    async with asyncio.timeout(10):
        with pytest.raises(asyncio.CancelledError):
            await turn

    assert not (project.dir / "never").exists()
    assert [e["outcome"] for e in read_log(log)] == ["cancelled"]
    on_disk = project.messages()
    assert_tool_calls_answered(on_disk)
    assert [m["role"] for m in on_disk] == ["user", "assistant", "tool", "tool"]
    kinds = [r["kind"] for r in project.records() if r.get("type") == "event"]
    assert kinds == ["cancelled"]


@pytest.mark.parametrize(
    ("outcome", "field"),
    [
        (Answered("done"), "text"),
        (PromptBlocked("done", "done"), "response"),
        (TurnFailed("done"), "message"),
        (Cancelled(), "text"),
    ],
    ids=["answered", "blocked", "failed", "cancelled"],
)
def test_an_outcome_equals_only_an_outcome_of_its_kind_and_never_changes(
    outcome: TurnOutcome, field: str
) -> None:
    others = [Answered("done"), PromptBlocked("done", "done"), TurnFailed("done"), ("done",), ()]
    same_kind = [other for other in others if type(other) is type(outcome)]
    assert [other for other in others if other == outcome] == same_kind
    with pytest.raises(AttributeError):
        setattr(outcome, field, "changed")
