"""A model server that fails mid-turn: the turn ends with one clear line, nothing hangs.

The loopback chat server answers the first request with a healthy tool call, then
fails the second: it drops the connection, stalls mid-stream, never answers, sends
a stream event that is not JSON, ends the stream early, sends an error event,
malformed tool-call JSON, HTTP 500, a malformed chunk (`delta: null`, `choices: null`
or a string, a list as the chunk, a number as the content or the tool name, invalid
UTF-8), trickles its reply a byte at a time or sends keep-alive comments forever
(which only `timeout_total` ends), a line past the cap, or text without end (cut at
the reply's cap). Each time the turn fails within the client's
timeout, `postGeneration` runs with outcome `error`, the session file still holds a
valid conversation (the first call answered), and no process is left behind.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hookgate.models.chat_stream import MAX_LINE_BYTES, MAX_REPLY_CHARS
from hookgate.runtime.turn import TurnFailed, run_turn
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
from runtime.project import HOOKGATE, Project, RecordingView
from support.chat_server import ChatServer, ServedReply, ServedToolCall

pytestmark = pytest.mark.anyio

#: The client's timeout where the fault is silence: short, so the quick profile stays quick.
SILENCE_TIMEOUT_S = 1.0
#: The client's timeout elsewhere: never what ends a fault that is not silence.
MODEL_TIMEOUT_S = 10.0
#: The whole model call's deadline where the server trickles or keeps the stream alive.
TOTAL_TIMEOUT_S = 1.0


@dataclass(frozen=True)
class ModelFault:
    """A faulty second reply, and the message the turn must end with (`{url}`: the server)."""

    reply: ServedReply
    message: str
    silent: bool = False
    """Whether the fault is silence, which only the client's timeout ends."""
    endless: bool = False
    """Whether the reply never goes silent nor ends: only `timeout_total` ends it."""

    @property
    def timeout(self) -> float:
        return SILENCE_TIMEOUT_S if self.silent else MODEL_TIMEOUT_S

    @property
    def bound(self) -> float:
        """Seconds the fault itself may last: the timeout that ends it, or none."""
        return TOTAL_TIMEOUT_S if self.endless else self.timeout if self.silent else 0.0

    def model(self, url: str) -> dict[str, Any]:
        """The agent file's `model:` for a server at `url`."""
        return {"name": "test", "base_url": url, "timeout": self.timeout,
                "timeout_total": TOTAL_TIMEOUT_S if self.endless else MODEL_TIMEOUT_S * 3}  # fmt: skip


def _chunk_event(data: str) -> bytes:
    return f"data: {data}\n\n".encode()


def malformed(data: bytes, message: str) -> ModelFault:
    """A stream whose second event is `data`: the turn fails saying `message`."""
    first = _chunk_event('{"choices": [{"index": 0, "delta": {"content": "partial"}}]}')
    return ModelFault(
        ServedReply(raw_events=[first, data]), f"the model server at {{url}} sent {message}"
    )


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
    "delta_null": malformed(
        _chunk_event('{"choices": [{"index": 0, "delta": null}]}'),
        "a delta that is not a JSON object",
    ),
    "choices_null": malformed(_chunk_event('{"choices": null}'), "choices that are not a list"),
    "choices_string": malformed(_chunk_event('{"choices": "abc"}'), "choices that are not a list"),
    "list_chunk": malformed(_chunk_event("[{}]"), "a stream event that is not a JSON object"),
    "number_content": malformed(
        _chunk_event('{"choices": [{"index": 0, "delta": {"content": 42}}]}'),
        "the content that is not a string",
    ),
    "number_tool_name": malformed(
        _chunk_event(
            '{"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": 1}}]}}]}'
        ),
        "a tool name that is not a string",
    ),
    "invalid_utf8": malformed(b'data: {"choices": "\xff"}\n\n', "bytes that are not UTF-8"),
    "trickle": ModelFault(
        ServedReply(text="a slow answer " * 40, fault="trickle"),
        f"the model server at {{url}} did not finish its reply within {TOTAL_TIMEOUT_S:g} s",
        endless=True,
    ),
    "keepalive": ModelFault(
        ServedReply(text="partial answer", fault="keepalive", fault_after=2),
        f"the model server at {{url}} did not finish its reply within {TOTAL_TIMEOUT_S:g} s",
        endless=True,
    ),
    "huge_line": ModelFault(
        ServedReply(text="partial answer", fault="huge_line", fault_after=2),
        f"the model server at {{url}} sent a line longer than {MAX_LINE_BYTES} bytes",
    ),
    "flood": ModelFault(
        ServedReply(text="partial answer", fault="flood", fault_after=2),
        f"the model server at {{url}} sent a reply longer than {MAX_REPLY_CHARS:,} characters",
    ),
    "http_500": ModelFault(
        ServedReply.http_error(500, '{"error": {"message": "the GPU caught fire"}}'),
        "the model server at {url} answered HTTP 500: the GPU caught fire",
    ),
}
#: The `hookgate -p` cases of the quick profile; the full one runs every fault.
PRINT_FAULTS = (
    tuple(MODEL_FAULTS)
    if FULL
    else ("drop", "stall", "malformed_tool_json", "delta_null", "invalid_utf8", "keepalive")
)
FIRST_TOOL_OUTPUT = "first-call-ran"


def serve(project: Project, server: ChatServer, fault: ModelFault, post_log: Path) -> str:
    """Queue a healthy tool call then the fault; write the agent. Returns the message."""
    server.queue(
        ServedReply(tool_calls=[ServedToolCall("shell", {"command": f"echo {FIRST_TOOL_OUTPUT}"})]),
        fault.reply,
    )
    project.write_agent(
        fault.model(server.url), yolo=True, hooks={"postGeneration": [recorder(post_log)]}
    )
    return fault.message.format(url=server.url)


def assert_history_kept(project: Project) -> None:
    """The question and the healthy call with its answer are on disk, every line whole."""
    assert_session_readable(project.home)
    messages = project.messages()
    assert messages[0] == {"role": "user", "content": "Go."}
    (tool,) = [m for m in messages if m["role"] == "tool"]
    assert FIRST_TOOL_OUTPUT in tool["content"]
    errors = [r for r in project.records() if r.get("kind") == "model_error"]
    assert len(errors) == 1, errors


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

    with bounded(fault.bound + TURN_MARGIN_S):
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

    with bounded(fault.bound + PROCESS_MARGIN_S):
        done = project.hookgate("-p", "Go.", env=marked_env(project, mark))

    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.startswith(f"hookgate: model error: {message}")
    assert done.stderr.count("\n") == 1
    assert events_in(post_log) == [("postGeneration", "error")]
    assert_history_kept(project)
    assert_nothing_left(mark)


#: What a refused huge line may add to hookgate's peak memory: the line up to the cap,
#: and the copies of one network read around it. Before the cap, a 64 MiB line cost 321 MiB.
HUGE_LINE_EXTRA_BYTES = 3 * MAX_LINE_BYTES


@pytest.mark.reliability("model")
def test_a_huge_line_fails_the_call_without_holding_it(
    project: Project, chat_server: ChatServer, mark: str
) -> None:
    """A 64 MiB SSE line: `-p` fails at the cap, its peak memory barely above a healthy run's."""

    def peak_memory(reply: ServedReply) -> tuple[int, str]:
        chat_server.queue(reply)
        project.write_agent({"name": "test", "base_url": chat_server.url})
        project.trust()
        with bounded(PROCESS_MARGIN_S):
            process = subprocess.Popen(
                [str(HOOKGATE), "-p", "Go."], cwd=project.dir, env=marked_env(project, mark),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            )  # fmt: skip
            assert process.stderr is not None
            stderr = process.stderr.read().decode()
            _, _, usage = os.wait4(process.pid, 0)
            process.returncode = 0  # reaped here, with its resource usage
        return usage.ru_maxrss * 1024, stderr  # Linux counts ru_maxrss in KiB

    healthy, _ = peak_memory(ServedReply(text="fine"))
    huge, stderr = peak_memory(ServedReply(text="x", fault="huge_line", fault_after=2))

    print(f"peak RSS: healthy {healthy / 2**20:.0f} MiB, 64 MiB line {huge / 2**20:.0f} MiB")
    assert f"sent a line longer than {MAX_LINE_BYTES} bytes" in stderr
    assert huge - healthy < HUGE_LINE_EXTRA_BYTES
    assert_nothing_left(mark)
