"""SIGINT and SIGTERM at random points of a `hookgate -p` turn with hooks and a tool call.

The points are seeded random delays over an uninterrupted run, measured first on this
machine, from the moment its first hook (sessionStart) starts to its exit, so they
fall in hooks, in the model's delays, in the tool call and in the shutdown alike.
Wherever the signal lands, hookgate exits promptly with the code a shell reads as
that signal (130, 143), or 0 if the turn was over; no process is left; the session
file is whole JSONL; and a turn that had started (its preGeneration hook saw the
question) has run postGeneration. Further cases signal while a given hook or the
tool runs: SIGINT, SIGTERM, SIGHUP (129), and SIGKILL, after which hookgate's
guardian must stop the hook or the tool it left running.

The interpreter's own start-up is left out: a SIGINT while CPython initialises or
imports ends it with "Fatal Python error" or a KeyboardInterrupt traceback before any
code of hookgate's runs, and nothing has been started then that could be left behind.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from hookgate.hooks.process.guard import GUARD_GRACE
from reliability.faultkit import (
    MARK_VAR,
    assert_nothing_left,
    assert_session_readable,
    events_in,
    record_to,
)
from reliability.profile import scale
from runtime.project import HOOKGATE, Project

#: The seed of the signal points: a failure names its point, and reruns hit it again.
SEED = 6
#: Signal points per signal: a dozen in all in the quick profile.
POINTS = scale(6, 40)
#: The points span this fraction of an uninterrupted run: a little past its end.
SPAN = 1.05
#: Seconds from the signal to the exit that still count as "promptly": a hook or the
#: tool gets its grace period, then postGeneration runs.
PROMPT_EXIT_S = 5.0
#: Seconds a slow hook or the tool takes, so that signals land inside them.
SLOW_HOOK_S = 0.1
SLOW_TOOL_S = 0.2
#: Seconds the hook or the tool takes when hookgate is killed outright: far longer than
#: the guardian's grace, so only the guardian can end it in time.
STUCK_S = 20.0
#: Where a case may wait before signalling: a hook (by its event) or the tool running.
LANDMARKS = ("sessionStart", "preToolCall", "tool", "postGeneration")
#: Seconds a landmark may take to be reached on a loaded machine.
REACH_S = 20.0
#: Seconds a process of the run may outlive hookgate: what hookgate started it stops
#: and reaps before it exits, so this is only the time /proc takes to catch up.
OUTLIVE_S = 0.05
ANSWER = "done"
#: What a shell reads as "ended by this signal": our exit code, or death by it.
ENDED_BY = {
    signum: {128 + signum, -signum} for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
}


def write_agent(project: Project, log: Path, landmarks: Path, stuck: str | None = None) -> None:
    """A turn with a hook at every turn event (three slow ones), a model delay and a tool call.

    Each hook and the tool first create a file named after their event in `landmarks`:
    a case can wait for one and signal while it runs. The one named `stuck` (a landmark)
    takes `STUCK_S`.
    """
    landmarks.mkdir(exist_ok=True)

    def slow(landmark: str, normal: float) -> float:
        return STUCK_S if landmark == stuck else normal

    def hook(event: str, delay: float = 0.0) -> list[dict[str, str]]:
        sleep = f"sleep {delay}; " if delay else ""
        here = f': > "{landmarks / event}"; '
        return [{"name": event, "command": f"{here}{sleep}{record_to(log)}"}]

    tool = f': > "{landmarks / "tool"}"; sleep {slow("tool", SLOW_TOOL_S)}'
    model = project.script(
        {"delay": 0.1, "tool_calls": [{"name": "shell", "arguments": {"command": tool}}]},
        {"delay": 0.1, "text": ANSWER},
    )
    hooks = {
        "sessionStart": hook("sessionStart", SLOW_HOOK_S),
        "preGeneration": hook("preGeneration"),
        "preToolCall": hook("preToolCall", slow("preToolCall", SLOW_HOOK_S)),
        "postToolCall": hook("postToolCall"),
        "postGeneration": hook("postGeneration", SLOW_HOOK_S),
    }
    # The tool's landmark lies outside the workspace: its sandbox may write there.
    project.write_agent(model, yolo=True, hooks=hooks, sandbox={"writable": [str(landmarks)]})


def start(project: Project, mark: str) -> subprocess.Popen[str]:
    project.trust()
    return subprocess.Popen(
        [str(HOOKGATE), "-p", "Go."],
        cwd=project.dir,
        env=project.env(**{MARK_VAR: mark}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def turn_length(tmp_path_factory: pytest.TempPathFactory) -> float:
    """Seconds an uninterrupted run takes on this machine, from sessionStart to its exit."""
    base = tmp_path_factory.mktemp("baseline")
    project = Project(base / "project", base / "home")
    project.dir.mkdir()
    write_agent(project, base / "events.log", base / "landmarks")
    process = start(project, "baseline")
    wait_for(base / "landmarks" / "sessionStart")
    started = time.monotonic()
    stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stdout) == (0, ANSWER + "\n"), stderr
    return time.monotonic() - started


def _points() -> list[tuple[signal.Signals, float]]:
    """(signal, fraction of the run's length) for every case, from `SEED`.

    One point in each of `POINTS` equal slices of the run (a little past its end),
    so that every stretch of it is hit whatever the seed.
    """
    rng = random.Random(SEED)
    width = SPAN / POINTS
    return [
        (signum, round(rng.uniform(index * width, (index + 1) * width), 3))
        for signum in (signal.SIGINT, signal.SIGTERM)
        for index in range(POINTS)
    ]


def run_signalled(
    project: Project, tmp_path: Path, mark: str, signum: signal.Signals, wait: Callable[[], None]
) -> Ending:
    """Start the turn, `wait()`, send `signum` (unless it is over), and collect the ending."""
    log = tmp_path / "events.log"
    write_agent(project, log, tmp_path / "landmarks")
    process = start(project, mark)
    try:
        wait()
        if process.poll() is None:
            process.send_signal(signum)
        signalled = time.monotonic()
        stdout, stderr = process.communicate(timeout=PROMPT_EXIT_S * 4)
        took = time.monotonic() - signalled
    finally:
        process.kill()
        process.wait()
    ending = Ending(process.returncode, stdout, stderr, took, events_in(log))
    assert ending.took < PROMPT_EXIT_S, ending
    assert "Traceback" not in stderr, stderr
    assert stdout in ("", ANSWER + "\n"), ending
    assert ending.returncode != 0 or ending.over, ending
    if ("preGeneration", None) in ending.events:  # the turn had started
        assert ending.events[-1][0] == "postGeneration", ending
    if project.session_files():
        assert_session_readable(project.home)
    assert_nothing_left(mark, within=OUTLIVE_S)
    return ending


@dataclass(frozen=True)
class Ending:
    """How a signalled run ended."""

    returncode: int
    stdout: str
    stderr: str
    took: float
    """Seconds from the signal to the exit."""
    events: list[tuple[str, str | None]]
    """The events the hooks saw, in order, with postGeneration's outcome."""

    @property
    def over(self) -> bool:
        """Whether the answer was printed: the signal came once the turn was over."""
        return self.stdout == ANSWER + "\n"


@pytest.mark.reliability("signals")
@pytest.mark.parametrize(
    ("signum", "at"), _points(), ids=[f"{s.name}@{a:.3f}" for s, a in _points()]
)
def test_signal_at_a_random_point_of_a_turn(
    project: Project,
    tmp_path: Path,
    mark: str,
    turn_length: float,
    signum: signal.Signals,
    at: float,
) -> None:
    """A signal at this fraction of a -p run: a prompt exit as 130/143 (0 if over), nothing left, postGeneration if started."""

    def wait() -> None:
        wait_for(tmp_path / "landmarks" / "sessionStart")
        time.sleep(at * turn_length)

    ending = run_signalled(project, tmp_path, mark, signum, wait)
    assert ending.returncode in ENDED_BY[signum] | ({0} if ending.over else set()), ending
    if ending.returncode == 128 + signum:  # hookgate caught it: it says so
        assert "hookgate: interrupted" in ending.stderr, ending


@pytest.mark.reliability("signals")
@pytest.mark.parametrize("landmark", LANDMARKS)
@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"]
)
def test_signal_while_a_hook_or_the_tool_runs(
    project: Project, tmp_path: Path, mark: str, signum: signal.Signals, landmark: str
) -> None:
    """A signal while this hook (or the tool) runs: exit 128+signal, postGeneration (if a turn began) ran whole, nothing left."""
    ending = run_signalled(
        project, tmp_path, mark, signum, lambda: wait_for(tmp_path / "landmarks" / landmark)
    )
    assert ending.returncode == 128 + signum, ending
    notice = (
        " before the turn started" if landmark == "sessionStart" else "; the turn was cancelled"
    )
    assert ending.stderr.endswith(f"hookgate: interrupted{notice}\n"), ending
    if landmark == "sessionStart":  # stopped mid-hook, before any turn: nothing to record
        assert ending.events == [], ending
    else:
        outcome = "answered" if landmark == "postGeneration" else "cancelled"
        assert ending.events[-1] == ("postGeneration", outcome), ending


@pytest.mark.reliability("signals")
@pytest.mark.parametrize("landmark", ["preToolCall", "tool"])
def test_kill_9_while_a_hook_or_the_tool_runs(
    project: Project, tmp_path: Path, mark: str, landmark: str
) -> None:
    """hookgate killed outright (SIGKILL) while this hook or the tool runs: its guardian stops them within its grace."""
    write_agent(project, tmp_path / "events.log", tmp_path / "landmarks", stuck=landmark)
    process = start(project, mark)
    try:
        wait_for(tmp_path / "landmarks" / landmark)
    finally:
        process.kill()
        process.communicate()

    assert process.returncode == -signal.SIGKILL
    assert_nothing_left(mark, within=GUARD_GRACE + PROMPT_EXIT_S)


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + REACH_S
    while not path.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"the run never reached {path.name}")
        time.sleep(0.005)
