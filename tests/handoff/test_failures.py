"""An asked agent that fails: every way reaches postAsk as an error, then the model as a
failed tool call, and nothing of the child is left behind.

A child's hook writes `$PPID` (the child `hookgate`, which leads its own process
group) to a file; once the hand-off is over, /proc must hold nothing of that group.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from handoff.conftest import AgentDir, Display, OpenAsker, agents_entry, read_log, wait_for_pid
from hookgate.handoff import Returned, delegate
from hookgate.handoff.child import ask_process
from hookgate.runtime.turn import Answered, run_turn
from runtime.project import Project, RecordingView

pytestmark = pytest.mark.anyio

#: Seconds an asked agent meant to hang may run before the asker stops it: long enough
#: for the child to start and run its sessionStart hook on a loaded two-core machine (at
#: 1 s it was sometimes stopped before it had written its pid).
HANG_TIMEOUT = 3.0


def write_pid(asked: AgentDir, pid_file: Path, then: str = "") -> dict[str, list[object]]:
    """The child's hooks: its sessionStart writes the child's pid, then runs `then`."""
    return {"sessionStart": [asked.hook("pid", f'echo "$PPID" > "{pid_file}"\n{then}')]}


async def test_a_hanging_child_is_stopped_and_the_model_reads_the_failure(
    project: Project,
    asker: AgentDir,
    asked: AgentDir,
    open_asker: OpenAsker,
    tmp_path: Path,
    group_gone: Callable[[int], None],
) -> None:
    post_log, stop_log, pid_file = tmp_path / "post.log", tmp_path / "stop.log", tmp_path / "pid"
    asker.write(
        {"tool_calls": [{"name": "ask_agent", "arguments": {"agent": "helper", "question": "?"}}]},
        {"expect": "no answer within 3s", "text": "The helper did not answer in time."},
        yolo=True,
        agents=agents_entry(asked, timeout=HANG_TIMEOUT),
        hooks={
            "postAsk": [asker.recorder("post", post_log)],
            "subagentStop": [asker.recorder("stop", stop_log)],
        },
    )
    asked.write({"delay": 60, "text": "too late"}, hooks=write_pid(asked, pid_file))
    agent = await open_asker(Display())

    outcome = await run_turn(agent, "Ask the helper.", RecordingView())

    assert outcome == Answered("The helper did not answer in time.")
    (post,) = read_log(post_log)
    assert post["answer"] == ""
    assert post["error"] == "no answer within 3s; the asked agent was stopped"
    assert read_log(stop_log)[0]["error"] == post["error"]
    (result,) = [m.content for m in agent.history.messages if m.role == "tool"]
    assert result.startswith("[the hand-off to helper failed: no answer within 3s")
    group_gone(int(pid_file.read_text()))


CRASH_HOOK = """\
import os, signal

def crash(payload):
    with open(os.environ["CRASH_PID_FILE"], "w") as file:
        file.write(f"{os.getpid()}\\n")
    os.kill(os.getpid(), signal.SIGKILL)
"""


async def test_a_crashing_child_is_an_error_and_leaves_nothing(
    project: Project,
    asker: AgentDir,
    asked: AgentDir,
    open_asker: OpenAsker,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    group_gone: Callable[[int], None],
) -> None:
    """The child dies hard in the middle of its turn: a Python hook of its own kills it."""
    pid_file, post_log = tmp_path / "pid", tmp_path / "post.log"
    asker.write(
        {"text": "unused"},
        agents=agents_entry(asked),
        hooks={"postAsk": [asker.recorder("post", post_log)]},
    )
    asked.write({"text": "never"}, hooks={"preGeneration": [{"python": "crash_hook:crash"}]})
    (asked.dir / "crash_hook.py").write_text(CRASH_HOOK)
    monkeypatch.setenv("PYTHONPATH", str(asked.dir))
    monkeypatch.setenv("CRASH_PID_FILE", str(pid_file))
    agent = await open_asker(Display())
    assert agent.handoffs is not None

    outcome = await delegate(agent.handoffs, "helper", "question")

    assert isinstance(outcome, Returned)
    assert outcome.error == "the asked agent was killed by SIGKILL"
    assert read_log(post_log)[0]["error"] == outcome.error
    group_gone(int(pid_file.read_text()))


async def test_a_child_whose_file_is_broken_fails_with_its_reason(
    project: Project, asker: AgentDir, asked: AgentDir, open_asker: OpenAsker
) -> None:
    asker.write({"text": "unused"}, agents=agents_entry(asked))
    asked.write({"text": "never"}, max_steps="many")
    agent = await open_asker(Display())
    assert agent.handoffs is not None

    outcome = await delegate(agent.handoffs, "helper", "question")

    assert isinstance(outcome, Returned)
    assert outcome.error is not None
    assert outcome.error.startswith("the asked agent's turn failed: ")
    assert "max_steps" in outcome.error


async def test_cancelling_the_turn_stops_the_child_and_its_tools(
    project: Project,
    asker: AgentDir,
    asked: AgentDir,
    open_asker: OpenAsker,
    tmp_path: Path,
    group_gone: Callable[[int], None],
) -> None:
    """The child's own shell tool runs in a group of its own: the child stops it."""
    pid_file, tool_pid_file, stop_log = tmp_path / "pid", tmp_path / "tool-pid", tmp_path / "stop"
    asker.write(
        {"tool_calls": [{"name": "ask_agent", "arguments": {"agent": "helper", "question": "?"}}]},
        yolo=True,
        agents=agents_entry(asked),
        hooks={"subagentStop": [asker.recorder("stop", stop_log)]},
        sandbox={"mode": "off"},  # a child never runs looser than its asker
    )
    sleeper = f'echo $$ > "{tool_pid_file}"; exec sleep 60'
    asked.write(
        {"tool_calls": [{"name": "shell", "arguments": {"command": sleeper}}]},
        yolo=True,
        hooks=write_pid(asked, pid_file),
        sandbox={"mode": "off"},  # unconfined: the tool's pid file lies outside, its pid ours
    )
    agent = await open_asker(Display())
    turn = asyncio.ensure_future(run_turn(agent, "Ask the helper.", RecordingView()))
    child_pid = await wait_for_pid(pid_file)
    tool_pid = await wait_for_pid(tool_pid_file)

    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    group_gone(child_pid)
    group_gone(tool_pid)
    assert [entry["error"] for entry in read_log(stop_log)] == ["the hand-off was cancelled"]


# --- children that are not hookgate at all: what the asker makes of their output ---------


async def ask_sh(script: str, tmp_path: Path, **options: float) -> tuple[str, str | None]:
    answer = await ask_process(
        ["/bin/sh", "-c", script], "the prompt", cwd=tmp_path, env=dict(os.environ),
        timeout=options.get("timeout", 10.0), on_text=lambda _: None,
        on_notice=lambda _: None, kill_grace=options.get("kill_grace", 0.3),
    )  # fmt: skip
    return answer.text, answer.error


@pytest.mark.parametrize(
    ("script", "error"),
    [
        pytest.param(
            "echo 'I am not hookgate'",
            "the asked agent wrote not JSON on its hand-off stream: 'I am not hookgate'",
            id="garbage",
        ),
        pytest.param(
            "echo oops >&2; exit 3",
            "the asked agent exited with status 3 without an answer: oops",
            id="non-zero-exit",
        ),
        pytest.param(
            'echo \'{"type": "text", "delta": "half an"}\'; exit 0',
            "the asked agent exited without an answer",
            id="no-final-line",
        ),
        pytest.param(
            'echo \'{"type": "answer", "text": "yes"}\'; exit 1',
            "the asked agent exited with status 1",
            id="answer-then-failure",
        ),
        pytest.param(
            'printf \'{"type": "answer", "text": "cut\'',
            "the asked agent wrote a line cut short on its hand-off stream: "
            '\'{"type": "answer", "text": "cut\'',
            id="torn-line",
        ),
    ],
)
async def test_what_a_broken_child_writes_is_reported_not_believed(
    tmp_path: Path, script: str, error: str
) -> None:
    _, reported = await ask_sh(script, tmp_path)

    assert reported == error


async def test_the_partial_answer_of_a_failed_child_reaches_post_ask_separately(
    tmp_path: Path,
) -> None:
    text, error = await ask_sh('echo \'{"type": "text", "delta": "half an"}\'; exit 4', tmp_path)

    assert (text, error) == ("half an", "the asked agent exited with status 4 without an answer")


async def test_a_child_deaf_to_sigterm_is_killed_with_its_group(
    tmp_path: Path, group_gone: Callable[[int], None]
) -> None:
    pid_file = tmp_path / "pid"
    script = f'trap "" TERM; sh -c \'trap "" TERM; sleep 60\' & echo $$ > "{pid_file}"; wait'

    _, error = await ask_sh(script, tmp_path, timeout=0.5, kill_grace=0.2)

    assert error == "no answer within 0.5s; the asked agent was stopped"
    group_gone(int(pid_file.read_text()))
