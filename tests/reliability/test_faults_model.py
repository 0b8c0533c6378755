"""A model server that fails mid-turn: the turn ends with one clear line, nothing hangs.

The loopback chat server answers the first request with a healthy tool call, then
fails the second: it drops the connection, stalls mid-stream, never answers, sends
a stream event that is not JSON, ends the stream early, sends an error event,
malformed tool-call JSON, or HTTP 500. Each time the turn fails within the client's
timeout, `postGeneration` runs with outcome `error`, the session file still holds a
valid conversation (the first call answered), and no process is left behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hookgate.turn import TurnFailed, run_turn
from reliability.faultkit import (
    PROCESS_MARGIN_S,
    TURN_MARGIN_S,
    assert_nothing_left,
    assert_session_readable,
    bounded,
    events_in,
    marked_env,
    recorder,
)
from reliability.profile import FULL
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView
from support.chat_server import ChatServer, ServedReply, ServedToolCall

pytestmark = pytest.mark.anyio

#: The client's timeout where the fault is silence: short, so the quick profile stays quick.
SILENCE_TIMEOUT_S = 1.0
#: The client's timeout elsewhere: never what ends a fault that is not silence.
MODEL_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ModelFault:
    """A faulty second reply, and the message the turn must end with (`{url}`: the server)."""

    reply: ServedReply
    message: str
    silent: bool = False
    """Whether the fault is silence, which only the client's timeout ends."""

    @property
    def timeout(self) -> float:
        return SILENCE_TIMEOUT_S if self.silent else MODEL_TIMEOUT_S


MODEL_FAULTS: dict[str, ModelFault] = {
    "drop": ModelFault(
        ServedReply(text="partial answer", fault="drop", fault_after=2),
        "the connection to the model server at {url} broke mid-reply",
    ),
    "stall": ModelFault(
        ServedReply(text="partial answer", fault="stall", fault_after=2),
        f"the model server at {{url}} went silent for more than {SILENCE_TIMEOUT_S:g} s mid-reply",
        silent=True,
    ),
    "hang": ModelFault(
        ServedReply(text="never sent", fault="hang"),
        f"the model server at {{url}} did not answer within {SILENCE_TIMEOUT_S:g} s",
        silent=True,
    ),
    "garbage": ModelFault(
        ServedReply(text="partial answer", fault="garbage", fault_after=2),
        "the model server at {url} sent a stream event that is not JSON",
    ),
    "end": ModelFault(
        ServedReply(text="partial answer", fault="end", fault_after=2),
        "the model server at {url} ended the stream before the reply was complete",
    ),
    "error_event": ModelFault(
        ServedReply(text="partial", fault="error_event", fault_after=2, error_body="overloaded"),
        "the model server at {url} reported an error mid-reply: overloaded",
    ),
    "malformed_tool_json": ModelFault(
        ServedReply(tool_calls=[ServedToolCall("shell", '{"command": "echo')]),
        "the model sent malformed JSON arguments for tool 'shell'",
    ),
    "tool_args_not_object": ModelFault(
        ServedReply(tool_calls=[ServedToolCall("shell", '["echo", "hi"]')]),
        "the model's arguments for tool 'shell' are not a JSON object",
    ),
    "http_500": ModelFault(
        ServedReply.http_error(500, '{"error": {"message": "the GPU caught fire"}}'),
        "the model server at {url} answered HTTP 500: the GPU caught fire",
    ),
}
#: The `hookgate -p` cases of the quick profile; the full one runs every fault.
PRINT_FAULTS = tuple(MODEL_FAULTS) if FULL else ("drop", "stall", "malformed_tool_json")
FIRST_TOOL_OUTPUT = "first-call-ran"


def serve(project: Project, server: ChatServer, fault: ModelFault, post_log: Path) -> str:
    """Queue a healthy tool call then the fault; write the agent. Returns the message."""
    server.queue(
        ServedReply(tool_calls=[ServedToolCall("shell", {"command": f"echo {FIRST_TOOL_OUTPUT}"})]),
        fault.reply,
    )
    model: dict[str, Any] = {"name": "test", "base_url": server.url, "timeout": fault.timeout}
    project.write_agent(model, yolo=True, hooks={"postGeneration": [recorder(post_log)]})
    return fault.message.format(url=server.url)


def assert_history_kept(project: Project) -> None:
    """The question and the healthy call with its answer are on disk, every line whole."""
    assert_session_readable(project.home)
    messages = project.messages()
    assert messages[0] == {"role": "user", "content": "Go."}
    (tool,) = [m for m in messages if m["role"] == "tool"]
    assert FIRST_TOOL_OUTPUT in tool["content"]


@pytest.mark.reliability("model")
@pytest.mark.parametrize("name", MODEL_FAULTS)
async def test_model_fault_in_a_turn(
    project: Project,
    chat_server: ChatServer,
    open_project_agent: OpenAgent,
    tmp_path: Path,
    mark: str,
    name: str,
) -> None:
    """The model server fails this way mid-turn: the turn fails with one line naming it, postGeneration ran."""
    fault = MODEL_FAULTS[name]
    post_log = tmp_path / "post.log"
    message = serve(project, chat_server, fault, post_log)
    agent = await open_project_agent()
    view = RecordingView()

    with bounded(fault.timeout + TURN_MARGIN_S if fault.silent else TURN_MARGIN_S):
        outcome = await run_turn(agent, "Go.", view)

    assert isinstance(outcome, TurnFailed)
    assert outcome.message.startswith(message)
    assert "\n" not in outcome.message
    assert view.notices == [f"model error: {outcome.message}"]
    assert events_in(post_log) == [("postGeneration", "error")]
    assert_history_kept(project)
    assert_nothing_left(mark)


@pytest.mark.reliability("model")
@pytest.mark.parametrize("name", PRINT_FAULTS)
def test_model_fault_under_print_mode(
    project: Project,
    chat_server: ChatServer,
    tmp_path: Path,
    mark: str,
    group_gone: Callable[[int], None],
    name: str,
) -> None:
    """`hookgate -p` whose model server fails this way: exit 1, one stderr line, no traceback."""
    fault = MODEL_FAULTS[name]
    post_log = tmp_path / "post.log"
    message = serve(project, chat_server, fault, post_log)

    with bounded(fault.timeout + PROCESS_MARGIN_S):
        done = project.hookgate("-p", "Go.", env=marked_env(project, mark))

    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.startswith(f"hookgate: model error: {message}")
    assert done.stderr.count("\n") == 1
    assert events_in(post_log) == [("postGeneration", "error")]
    assert_history_kept(project)
    assert_nothing_left(mark)
