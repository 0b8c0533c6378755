"""`hookgate --ask NAME "question"` as a script runs it: stdout carries the final answer alone.

The asked agent thinks aloud before its answer (text alongside a tool call), and its
text streams while it writes; none of that may reach stdout, only the final answer,
and only once the asking file's postAsk hooks have run.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from handoff.conftest import START_WAIT_S, AgentDir, agents_entry, read_log, wait_for_pid_file
from runtime.project import Project

THINKING_ALOUD = {
    "text": "Let me look around first.",
    "tool_calls": [{"name": "list_files", "arguments": {"pattern": "*"}}],
}


def test_ask_prints_the_final_answer_alone(
    project: Project, asker: AgentDir, asked: AgentDir, tmp_path: Path
) -> None:
    start_log = tmp_path / "start.log"
    asker.write(
        {"text": "the asker's model is never called"},
        agents=agents_entry(asked),
        hooks={"subagentStart": [asker.recorder("start", start_log)]},
    )
    asked.write(THINKING_ALOUD, {"text": "The final answer."}, tools=["list_files"])

    run = project.hookgate("--ask", "helper", "What is here?")

    assert (run.returncode, run.stdout) == (0, "The final answer.\n"), run.stderr
    assert [entry["agent"] for entry in read_log(start_log)] == ["helper"]


def test_ask_with_a_post_ask_hook_prints_what_the_hook_left(
    project: Project, asker: AgentDir, asked: AgentDir
) -> None:
    asker.write(
        {"text": "unused"},
        agents=agents_entry(asked),
        hooks={
            "postAsk": [
                asker.hook(
                    "replace", "cat >/dev/null; sleep 0.3; " + _echo({"answer": "Checked answer."})
                )
            ]
        },
    )
    asked.write(THINKING_ALOUD, {"text": "The raw answer."}, tools=["list_files"])

    run = project.hookgate("--ask", "helper", "What is here?", "-v")

    assert (run.returncode, run.stdout) == (0, "Checked answer.\n"), run.stderr
    assert "The raw answer." in run.stderr  # -v: the stream is shown, on stderr
    assert "the answer of helper was replaced by a hook" in run.stderr


def test_ask_refused_by_pre_ask_prints_the_hook_response_and_exits_2(
    project: Project, asker: AgentDir, asked: AgentDir
) -> None:
    block = {"action": "block", "reason": "not today", "message": "The helper is off."}
    asker.write(
        {"text": "unused"},
        agents=agents_entry(asked),
        hooks={"preAsk": [asker.hook("guard", "cat >/dev/null; " + _echo(block))]},
    )
    asked.write({"text": "never"})

    run = project.hookgate("--ask", "helper", "anything")

    assert (run.returncode, run.stdout) == (2, "The helper is off.\n")
    assert "hand-off refused: not today" in run.stderr


def test_ask_counts_depth_from_the_agent_that_runs_it(
    project: Project, asker: AgentDir, asked: AgentDir
) -> None:
    """A skill of an asked agent running `hookgate --ask` continues the count."""
    asker.write({"text": "unused"}, agents=agents_entry(asked))
    asked.write({"text": "never"})
    env = project.env(HOOKGATE_ASKED_DEPTH="2", HOOKGATE_ASK_DEPTH_LIMIT="2")

    run = project.hookgate("--ask", "helper", "anything", env=env)

    assert (run.returncode, run.stdout) == (2, "")
    assert "3 hand-offs deep; the limit is 2" in run.stderr


def test_ask_a_failed_hand_off_exits_1_with_nothing_on_stdout(
    project: Project, asker: AgentDir, asked: AgentDir
) -> None:
    asker.write({"text": "unused"}, agents=agents_entry(asked))
    asked.write({"error": "the model is overloaded"})

    run = project.hookgate("--ask", "helper", "anything")

    assert (run.returncode, run.stdout) == (1, "")
    assert "the hand-off to helper failed" in run.stderr
    assert "the model is overloaded" in run.stderr


def test_ask_an_unknown_agent_is_a_one_line_error_with_a_hint(
    project: Project, asker: AgentDir, asked: AgentDir
) -> None:
    asker.write({"text": "unused"}, agents=agents_entry(asked))

    run = project.hookgate("--ask", "helpr", "anything")

    assert (run.returncode, run.stdout) == (1, "")
    assert "no agent named 'helpr'" in run.stderr
    assert "did you mean 'helper'?" in run.stderr
    assert "Traceback" not in run.stderr


def _echo(reply: dict[str, object]) -> str:
    return "echo '" + json.dumps(reply).replace("'", "'\"'\"'") + "'"


def write_slow_asked(asked: AgentDir, pid_file: Path) -> None:
    """An asked agent that writes its pid to `pid_file`, then thinks for a minute."""
    hook = asked.hook("pid", f'echo "$PPID" > "{pid_file}"')
    asked.write({"delay": 60, "text": "too late"}, hooks={"sessionStart": [hook]})


def test_an_asker_killed_outright_takes_its_asked_agent_with_it(
    project: Project,
    asker: AgentDir,
    asked: AgentDir,
    tmp_path: Path,
    group_gone: Callable[[int], None],
) -> None:
    """SIGKILL leaves the asker no chance to stop its child: the kernel tells the child."""
    pid_file = tmp_path / "pid"
    asker.write({"text": "unused"}, agents=agents_entry(asked))
    write_slow_asked(asked, pid_file)
    process = project.start_hookgate("--ask", "helper", "anything")
    try:
        child = wait_for_pid_file(pid_file)
    finally:
        process.kill()
        process.communicate()

    _reap_adopted(child)  # the child was reparented to this test process, the subreaper
    group_gone(child)


def test_sighup_cancels_the_hand_off_after_subagent_stop_ran(
    project: Project,
    asker: AgentDir,
    asked: AgentDir,
    tmp_path: Path,
    group_gone: Callable[[int], None],
) -> None:
    """A closed terminal (SIGHUP) is SIGTERM: the asked agent stops, subagentStop runs."""
    pid_file, stop_log = tmp_path / "pid", tmp_path / "stop.log"
    asker.write(
        {"text": "unused"},
        agents=agents_entry(asked),
        hooks={"subagentStop": [asker.recorder("stop", stop_log)]},
    )
    write_slow_asked(asked, pid_file)
    process = project.start_hookgate("--ask", "helper", "anything")
    try:
        child = wait_for_pid_file(pid_file)
        process.send_signal(signal.SIGHUP)
        stdout, stderr = process.communicate(timeout=START_WAIT_S)
    finally:
        process.kill()

    assert (process.returncode, stdout) == (129, ""), stderr
    assert "interrupted; the hand-off was cancelled" in stderr
    assert len(read_log(stop_log)) == 1
    group_gone(child)


def _reap_adopted(pid: int) -> None:
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            return  # not ours: it was reaped by someone else
        time.sleep(0.02)
    pytest.fail(f"the asked agent {pid} outlived its asker")
