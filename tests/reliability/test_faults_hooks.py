"""Hooks that crash, hang, flood, print garbage or kill themselves, at every event.

Whatever the fault, its hook's `onError` default decides: the fail-safe events
(`sessionStart`, `preGeneration`) stop the run or the question, the others warn and go
on. Every case also ends in bounded time, leaves no process behind, leaves a readable
session file, runs `postGeneration` (a healthy recorder after the faulty hook proves
it) and names the hook and the fault to the user.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from handoff.conftest import AgentDir, agents_entry
from hookgate.hooks.wording import DEFAULT_BLOCK_RESPONSE
from hookgate.runtime.agent import SessionStopped
from hookgate.runtime.turn import Answered, PromptBlocked, run_turn
from reliability.faultkit import (
    HANG_TIMEOUT_S,
    HOOK_FAULTS,
    PROCESS_MARGIN_S,
    TURN_MARGIN_S,
    FaultyHook,
    assert_nothing_left,
    assert_session_readable,
    bounded,
    events_in,
    marked_env,
    recorder,
    write_faulty_hook,
)
from reliability.profile import FULL
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView

pytestmark = pytest.mark.anyio

#: Events of a plain turn: a question, one shell call, an answer.
TURN_EVENTS = ("sessionStart", "preGeneration", "preToolCall", "postToolCall", "postGeneration")
#: Events of a hand-off: the turn's one tool call asks a child agent instead.
HANDOFF_EVENTS = ("preAsk", "postAsk", "subagentStart", "subagentStop")
EVENTS = TURN_EVENTS + HANDOFF_EVENTS
#: What a failure does under the default onError where it is not a warning.
EFFECTS = {"sessionStart": "aborts", "preGeneration": "blocks"}
#: Seconds a case may take: a hanging hook's timeout, and the margin.
BOUND_S = HANG_TIMEOUT_S + TURN_MARGIN_S
PRINT_BOUND_S = HANG_TIMEOUT_S + PROCESS_MARGIN_S
#: The `hookgate -p` cases of the quick profile, one per fault; the full one runs all.
QUICK_PRINT_CASES = (
    ("sessionStart", "crash"),
    ("preGeneration", "hang"),
    ("preToolCall", "flood"),
    ("postGeneration", "suicide"),
    ("postAsk", "garbage"),
)
PRINT_CASES = tuple(itertools.product(EVENTS, HOOK_FAULTS)) if FULL else QUICK_PRINT_CASES
TOOL_OUTPUT = "tool-ran"
HELPER_ANSWER = "the helper says hi"
ANSWER = "done"


@dataclass(frozen=True)
class Scenario:
    """A project whose agent has the faulty hook at one event and a recorder at the end."""

    event: str
    fault: str
    hook: FaultyHook
    post_log: Path

    @property
    def failure(self) -> str:
        """The line that tells the user which hook failed, where, and how."""
        return f"hook 'faulty' ({self.event}) failed: {HOOK_FAULTS[self.fault].message}"

    def named_in(self, lines: list[str]) -> bool:
        """Whether one of `lines` starts with `failure` (garbage is quoted after it)."""
        return any(line.removeprefix("hookgate: ").startswith(self.failure) for line in lines)


def build(project: Project, tmp_path: Path, event: str, fault: str) -> Scenario:
    """Write the agent (and, for hand-off events, the agent it asks) for one case."""
    hook = write_faulty_hook(tmp_path / "faulty", event, HOOK_FAULTS[fault])
    post_log = tmp_path / "post.log"
    hooks: dict[str, list[object]] = {event: [hook.entry]}
    hooks.setdefault("postGeneration", []).append(recorder(post_log))
    if event in HANDOFF_EVENTS:
        helper = AgentDir(tmp_path / "helper")
        helper.write({"text": HELPER_ANSWER})
        call = {"name": "ask_agent", "arguments": {"agent": "helper", "question": "hi?"}}
        expected = HELPER_ANSWER
        settings: dict[str, object] = {"agents": agents_entry(helper)}
    else:
        call = {"name": "shell", "arguments": {"command": f"echo {TOOL_OUTPUT}"}}
        expected, settings = TOOL_OUTPUT, {}
    model = project.script({"tool_calls": [call]}, {"expect": expected, "text": ANSWER})
    project.write_agent(model, yolo=True, hooks=hooks, **settings)
    return Scenario(event, fault, hook, post_log)


def assert_hook_gone(scenario: Scenario, group_gone: Callable[[int], None]) -> None:
    pid = scenario.hook.pid()
    assert pid is not None, f"the faulty hook never ran at {scenario.event}"
    group_gone(pid)


@pytest.mark.reliability("hooks")
@pytest.mark.parametrize("fault", HOOK_FAULTS)
@pytest.mark.parametrize("event", EVENTS, ids=[f"{e}({EFFECTS.get(e, 'warns')})" for e in EVENTS])
async def test_faulty_hook_in_a_turn(
    project: Project,
    open_project_agent: OpenAgent,
    tmp_path: Path,
    mark: str,
    group_gone: Callable[[int], None],
    event: str,
    fault: str,
) -> None:
    """A hook failing this way at this event: onError's default (in brackets), bounded, named, nothing left, postGeneration ran if a turn began."""
    scenario = build(project, tmp_path, event, fault)
    notices: list[str] = []
    view = RecordingView()

    with bounded(BOUND_S):
        if event == "sessionStart":
            with pytest.raises(SessionStopped) as stopped:
                await open_project_agent(notify=notices.append)
        else:
            agent = await open_project_agent(notify=notices.append)
            outcome = await run_turn(agent, "Go.", view)

    if event == "sessionStart":  # fail-safe: the run is aborted before any turn exists
        assert str(stopped.value).startswith(
            f"the session was stopped by a sessionStart hook: "
            f"hook 'faulty' failed: {HOOK_FAULTS[fault].message}"
        )
        # no turn began, yet the Stop hooks hear the run was aborted
        assert events_in(scenario.post_log) == [("postGeneration", "aborted")]
        (stop,) = [r for r in assert_session_readable(project.home) if r.get("type") == "event"]
        assert stop["kind"] == "session_stopped"
    elif event == "preGeneration":  # fail-safe: the question is stopped, unsent
        assert isinstance(outcome, PromptBlocked)
        assert outcome.reason.startswith(f"hook 'faulty' failed: {HOOK_FAULTS[fault].message}")
        assert outcome.response == DEFAULT_BLOCK_RESPONSE
        assert scenario.named_in(view.notices)
        assert events_in(scenario.post_log) == [("postGeneration", "blocked")]
        assert view.started == []
        assert_session_readable(project.home)
    else:  # warn: a notice, and the turn goes on as if the hook had allowed
        assert outcome == Answered(ANSWER)
        assert scenario.named_in(view.notices + notices)
        assert events_in(scenario.post_log) == [("postGeneration", "answered")]
        assert_session_readable(project.home)
    assert_hook_gone(scenario, group_gone)
    assert_nothing_left(mark)


@pytest.mark.reliability("hooks")
@pytest.mark.parametrize(("event", "fault"), PRINT_CASES)
def test_faulty_hook_under_print_mode(
    project: Project,
    tmp_path: Path,
    mark: str,
    group_gone: Callable[[int], None],
    event: str,
    fault: str,
) -> None:
    """`hookgate -p` with a faulty hook at this event: the documented exit code and a stderr line naming it."""
    scenario = build(project, tmp_path, event, fault)

    with bounded(PRINT_BOUND_S):
        done = project.hookgate("-p", "Go.", env=marked_env(project, mark))

    message = HOOK_FAULTS[fault].message
    if event == "sessionStart":
        assert (done.returncode, done.stdout) == (1, ""), done.stderr
        assert done.stderr.startswith(
            f"hookgate: the session was stopped by a sessionStart hook: hook 'faulty' failed: {message}"
        )
        assert done.stderr.count("\n") == 1
        assert events_in(scenario.post_log) == [("postGeneration", "aborted")]
    elif event == "preGeneration":
        assert (done.returncode, done.stdout) == (2, DEFAULT_BLOCK_RESPONSE + "\n"), done.stderr
        assert scenario.named_in(done.stderr.splitlines())
        assert events_in(scenario.post_log) == [("postGeneration", "blocked")]
    else:
        assert (done.returncode, done.stdout) == (0, ANSWER + "\n"), done.stderr
        assert scenario.named_in(done.stderr.splitlines())
        assert events_in(scenario.post_log) == [("postGeneration", "answered")]
    assert "Traceback" not in done.stderr
    assert_session_readable(project.home)
    assert_hook_gone(scenario, group_gone)
    assert_nothing_left(mark)


@pytest.mark.reliability("hooks")
async def test_hanging_hook_of_an_asked_agent_past_the_hand_off_timeout(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path, mark: str
) -> None:
    """The asked agent's sessionStart hook hangs past the hand-off's timeout: the child and its hook are stopped."""
    helper = AgentDir(tmp_path / "helper")
    stuck = helper.hook("stuck", f'echo $$ > "{tmp_path / "stuck.pid"}"; sleep 60')
    helper.write({"text": HELPER_ANSWER}, hooks={"sessionStart": [stuck]})
    post_log = tmp_path / "post.log"
    call = {"name": "ask_agent", "arguments": {"agent": "helper", "question": "hi?"}}
    model = project.script(
        {"tool_calls": [call]}, {"expect": "no answer within 1s", "text": ANSWER}
    )
    project.write_agent(
        model,
        yolo=True,
        agents=agents_entry(helper, timeout=1),
        hooks={"postGeneration": [recorder(post_log)]},
    )
    agent = await open_project_agent()

    with bounded(1 + TURN_MARGIN_S):
        outcome = await run_turn(agent, "Go.", RecordingView())

    assert outcome == Answered(ANSWER)
    assert events_in(post_log) == [("postGeneration", "answered")]
    assert_session_readable(project.home)
    assert_nothing_left(mark)
