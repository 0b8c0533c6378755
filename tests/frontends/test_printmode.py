"""`hookgate -p` as a user runs it: a real subprocess, stdin not a terminal.

stdout carries the answer alone; notices go to stderr; the exit code says what
happened (0 answered, 1 failed, 2 blocked, 130 SIGINT, 143 SIGTERM, 129 SIGHUP).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from runtime.project import (
    HOOKGATE,
    Project,
    assert_tool_calls_answered,
    chat_messages,
    read_log,
    served_model,
)
from runtime.test_guardrails import write_objecting_fake_guardrail
from support.chat_server import ChatServer, ServedReply, ServedToolCall

#: Seconds from the signal to the process's exit that still count as "promptly":
#: the tool's group gets its grace period, then postGeneration runs.
PROMPT_EXIT_S = 5.0
#: Seconds the scripted tool call may take to start on a loaded machine.
START_WAIT_S = 20.0


def wait_for_pid_file(path: Path, process: subprocess.Popen[str]) -> int:
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return int(path.read_text())
        if process.poll() is not None:
            pytest.fail(f"hookgate exited first: {process.communicate()}")
        time.sleep(0.02)
    pytest.fail(f"the tool never started ({path} not written)")


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_signal_during_a_tool_call_exits_promptly_after_post_generation(
    project: Project,
    tmp_path: Path,
    group_gone: Callable[[int], None],
    signum: signal.Signals,
    code: int,
) -> None:
    log = tmp_path / "post.log"
    model = project.script(
        {
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "echo $$ > started; sleep 30"}}
            ]
        },
        {"text": "never reached"},
    )
    project.write_agent(model, yolo=True, hooks={"postGeneration": [project.recorder(log)]})
    process = project.start_hookgate("-p", "Run the long command")
    pgid = wait_for_pid_file(project.dir / "started", process)
    try:
        process.send_signal(signum)
        sent = time.monotonic()
        stdout, stderr = process.communicate(timeout=PROMPT_EXIT_S * 4)
        took = time.monotonic() - sent
    finally:
        with suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)  # only if the test is failing: leave nothing
        process.kill()

    assert process.returncode == code, stderr
    assert took < PROMPT_EXIT_S
    assert stdout == ""
    assert "interrupted" in stderr
    assert [(e["event"], e["outcome"]) for e in read_log(log)] == [("postGeneration", "cancelled")]
    records = project.records()  # every line parses
    assert records[0]["type"] == "session"
    assert {"role": "user", "content": "Run the long command"} in project.messages()
    group_gone(pgid)


def test_a_second_signal_does_not_cut_post_generation_short(
    project: Project, tmp_path: Path, group_gone: Callable[[int], None]
) -> None:
    """An impatient second Ctrl-C must not cost the audit log its entry."""
    log = tmp_path / "post.log"
    slow_audit = f'echo $$ > post-started; sleep 1; cat >> "{log}"; echo >> "{log}"'
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "echo $$ > started; sleep 30"}}]}
    )
    project.write_agent(
        model, yolo=True, hooks={"postGeneration": [{"name": "audit", "command": slow_audit}]}
    )
    process = project.start_hookgate("-p", "Run the long command")
    pgid = wait_for_pid_file(project.dir / "started", process)
    try:
        process.send_signal(signal.SIGINT)
        wait_for_pid_file(project.dir / "post-started", process)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=PROMPT_EXIT_S * 4)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        process.kill()

    assert process.returncode == 130, stderr
    assert [e["outcome"] for e in read_log(log)] == ["cancelled"]
    group_gone(pgid)


def test_a_session_continued_after_an_interrupted_tool_call_is_a_valid_conversation(
    project: Project, chat_server: ChatServer
) -> None:
    """Every tool call in the history has its answer, or a real server refuses the request."""
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "echo $$ > started; sleep 30"}}]}
    )
    project.write_agent(model, yolo=True)
    process = project.start_hookgate("-p", "Run the long command")
    pgid = wait_for_pid_file(project.dir / "started", process)
    try:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=PROMPT_EXIT_S * 4)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    project.write_agent(served_model(chat_server.url), yolo=True)
    chat_server.queue(ServedReply(text="It was interrupted."))

    resumed = project.hookgate("--continue", "-p", "What happened?")

    assert resumed.returncode == 0, resumed.stderr
    messages = chat_messages(chat_server.requests[0].body)
    assert_tool_calls_answered(messages)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]


def test_notices_go_to_stderr_and_stdout_holds_the_answer_alone(project: Project) -> None:
    model = project.script(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "hookgate.yaml"}}]},
        {"expect": "SCRUBBED", "text": "The answer."},
    )
    project.write_agent(
        model,
        hooks={
            "preGeneration": [{"name": "hello", "command": """echo '{"message": "NOTICE-ONE"}'"""}],
            "postToolCall": [{"name": "scrub", "command": """echo '{"result": "SCRUBBED"}'"""}],
            "postGeneration": [{"name": "broken", "command": "exit 7"}],
        },
    )

    run = project.hookgate("-p", "What is in the agent file?")

    assert run.returncode == 0, run.stderr
    assert run.stdout == "The answer.\n"
    lines = run.stderr.splitlines()
    assert "hookgate: hello: NOTICE-ONE" in lines
    assert "hookgate: the result of read_file was replaced by a hook" in lines
    assert any(line.startswith("hookgate: hook 'broken' (postGeneration) failed") for line in lines)
    assert "\033[" not in run.stderr  # NO_COLOR, and stderr is no terminal


def test_an_objection_to_a_result_it_let_through_is_not_called_withholding(
    project: Project,
) -> None:
    """A hook named like a guardrail that objects on postToolCall without replacing the
    result: the model read the result, and stderr must not say it was withheld."""
    write_objecting_fake_guardrail(project)

    run = project.hookgate("-v", "-p", "run it")

    assert run.returncode == 0, run.stderr
    assert "hookgate: guardrail fake objected: I object" in run.stderr.splitlines()
    assert "withheld" not in run.stderr


@pytest.mark.parametrize(("yolo", "made"), [(False, False), (True, True)])
def test_without_a_terminal_calls_needing_consent_are_denied_unless_yolo(
    project: Project, yolo: bool, made: bool
) -> None:
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "touch made"}}]},
        {"text": "Done."},
    )
    project.write_agent(model, yolo=yolo)

    run = project.hookgate("-p", "Make a file")

    assert run.returncode == 0, run.stderr
    assert (project.dir / "made").exists() is made
    tool = next(m for m in project.messages() if m["role"] == "tool")
    assert tool["content"].startswith("[denied") is not made


def test_session_start_block_exits_1_with_one_line(project: Project) -> None:
    model = project.script({"text": "never"})
    block = """echo '{"action": "block", "reason": "maintenance window"}'"""
    project.write_agent(model, hooks={"sessionStart": [{"name": "gate", "command": block}]})

    run = project.hookgate("-p", "Anything")

    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.strip().splitlines() == [
        "hookgate: the session was stopped by a sessionStart hook: maintenance window"
    ]


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (ServedReply.http_error(500, '{"error": {"message": "overloaded"}}'), "HTTP 500"),
        (ServedReply(tool_calls=[ServedToolCall("shell", "{not json")]), "malformed JSON"),
    ],
)
def test_model_failure_exits_1_with_the_message_on_stderr(
    project: Project, chat_server: ChatServer, fault: ServedReply, message: str
) -> None:
    project.write_agent(served_model(chat_server.url))
    chat_server.queue(fault)

    run = project.hookgate("-p", "Hello?")

    assert run.returncode == 1
    assert run.stdout == ""
    assert message in run.stderr
    assert "Traceback" not in run.stderr
    assert {"role": "user", "content": "Hello?"} in project.messages()


def test_scripted_model_running_out_exits_1(project: Project) -> None:
    project.write_agent(
        project.script({"tool_calls": [{"name": "list_files", "arguments": {"pattern": "*"}}]})
    )

    run = project.hookgate("-p", "List the files")

    assert run.returncode == 1
    assert "the scripted model has no reply left" in run.stderr
    assert run.stdout == ""


def test_continue_sends_the_previous_turn_with_the_next_question(
    project: Project, chat_server: ChatServer
) -> None:
    project.write_agent(served_model(chat_server.url))
    chat_server.queue(ServedReply(text="It is 42."), ServedReply(text="Yes, 42."))

    first = project.hookgate("-p", "What is the answer?")
    second = project.hookgate("--continue", "-p", "Are you sure?")

    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert second.stdout == "Yes, 42.\n"
    assert [(m["role"], m["content"]) for m in chat_messages(chat_server.requests[1].body)][1:] == [
        ("user", "What is the answer?"),
        ("assistant", "It is 42."),
        ("user", "Are you sure?"),
    ]
    assert len(project.session_files()) == 1


def test_resume_picks_the_session_by_id_not_the_latest(
    project: Project, chat_server: ChatServer
) -> None:
    project.write_agent(served_model(chat_server.url))
    chat_server.queue(
        ServedReply(text="A."), ServedReply(text="B."), ServedReply(text="Back to A.")
    )
    project.hookgate("-p", "Question A")
    (first_session,) = project.session_files()
    project.hookgate("-p", "Question B")

    run = project.hookgate("--resume", first_session.stem, "-p", "And then?")

    assert run.returncode == 0, run.stderr
    sent = json.dumps(chat_server.requests[2].body)
    assert "Question A" in sent
    assert "Question B" not in sent
    assert project.messages(first_session)[-1] == {"role": "assistant", "content": "Back to A."}


def test_session_start_block_still_runs_post_generation_as_aborted(
    project: Project, tmp_path: Path
) -> None:
    log = tmp_path / "stop.jsonl"
    block = """echo '{"action": "block", "reason": "maintenance window"}'"""
    project.write_agent(
        project.script({"text": "never"}),
        hooks={
            "sessionStart": [{"name": "gate", "command": block}],
            "postGeneration": [project.recorder(log)],
        },
    )

    run = project.hookgate("-p", "Secret question")

    assert run.returncode == 1
    (stop,) = read_log(log)
    assert stop["outcome"] == "aborted"
    assert stop["answer"] is None
    assert "Secret question" not in json.dumps(stop)  # no hook ever checked it


def test_mecatl_session_start_echoing_its_input_unchanged_lets_the_run_go_on(
    project: Project,
) -> None:
    echo = """python3 -c 'import json,sys; print(json.dumps({"mutated": json.load(sys.stdin)["Input"]}))'"""
    project.write_agent(
        project.script({"text": "Hello."}),
        hooks={"sessionStart": [{"name": "echo", "command": echo, "format": "mecatl"}]},
    )

    run = project.hookgate("-p", "Hi")

    assert (run.returncode, run.stdout, run.stderr) == (0, "Hello.\n", "")


@pytest.mark.parametrize(
    ("command", "rules"),
    [
        ("touch made", ['"shell(touch made)"']),
        ("mkdir out && touch out/made", ['"shell(mkdir out)"', '"shell(touch out/made)"']),
    ],
)
def test_a_call_denied_for_want_of_consent_says_so_and_names_the_rule_to_add(
    project: Project, command: str, rules: list[str]
) -> None:
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
        {"text": "Done."},
    )
    project.write_agent(model)

    run = project.hookgate("-p", "Make a file")  # no -v

    assert run.returncode == 0, run.stderr
    (line,) = [line for line in run.stderr.splitlines() if "consent" in line]
    assert "no terminal to ask" in line
    assert all(rule in line for rule in rules), line
    assert "permissions" in line
    tool = next(m for m in project.messages() if m["role"] == "tool")
    assert "denied by the user" not in tool["content"]
    assert "no one was asked" in tool["content"]


def ask_hook(name: str, reason: str | None) -> dict[str, Any]:
    """A Claude-format PreToolUse hook that asks for consent, with `reason` if any."""
    specific = {"hookEventName": "PreToolUse", "permissionDecision": "ask"}
    if reason is not None:
        specific["permissionDecisionReason"] = reason
    reply = json.dumps({"hookSpecificOutput": specific})
    return {"name": name, "format": "claude", "command": f"echo '{reply}'"}


def test_a_call_a_hook_asks_about_names_the_hook_and_its_reason_not_a_rule_to_add(
    project: Project,
) -> None:
    """An allow rule does not override a hook's ask: the notice says who asks, and why."""
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "git push"}}]},
        {"text": "Done."},
    )
    hooks = [ask_hook("push-guard", "pushing needs a human"), ask_hook("second", "me too")]
    project.write_agent(model, yolo=True, hooks={"PreToolUse": hooks})

    run = project.hookgate("-p", "Push it")

    assert run.returncode == 0, run.stderr
    (line,) = [line for line in run.stderr.splitlines() if "consent" in line]
    assert line.endswith(
        "shell call denied: it needs consent and there is no terminal to ask on; "
        "hook 'push-guard' asks: pushing needs a human, whatever rule allows the call"
    )
    assert "permissions.allow" not in line


def test_a_blocked_question_names_the_hook_and_its_reason_on_stderr(project: Project) -> None:
    block = """echo '{"action": "block", "reason": "no questions on Fridays"}'"""
    project.write_agent(
        project.script({"text": "never"}),
        hooks={"preGeneration": [{"name": "friday-gate", "command": block}]},
    )

    run = project.hookgate("-p", "Anything")  # no -v

    assert run.returncode == 2
    assert "hookgate: the question was blocked by hook 'friday-gate': no questions on Fridays" in (
        run.stderr.splitlines()
    )


@pytest.mark.parametrize("where", ["tool", "hook"])
def test_children_die_with_a_hookgate_killed_outright(
    project: Project,
    group_gone: Callable[[int], None],
    outlived: Callable[[int], None],
    where: str,
) -> None:
    """`kill -9 hookgate` while a tool or a hook runs: they are stopped all the same."""
    started = project.dir / "started"
    long_command = f"echo $$ > {started}; sleep 30"
    tool = {"name": "shell", "arguments": {"command": long_command if where == "tool" else "true"}}
    hooks = {}
    if where == "hook":
        hook = project.hook("slow", f"cat >/dev/null; {long_command}")
        hooks = {"preToolCall": [{"command": hook, "timeout": 60}]}
    # Unconfined, so that `$$` is a pid of ours (tests/sandbox: the sandboxed command).
    project.write_agent(
        project.script({"tool_calls": [tool]}), yolo=True, hooks=hooks, sandbox={"mode": "off"}
    )
    process = project.start_hookgate("-p", "Run the long command")
    pgid = wait_for_pid_file(started, process)

    process.kill()
    process.communicate()

    outlived(pgid)
    group_gone(pgid)


def test_the_agent_file_passes_tool_choice_and_extra_fields_to_the_server(
    project: Project, chat_server: ChatServer
) -> None:
    model = {**served_model(chat_server.url), "tool_choice": "none",
             "extra": {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}}}  # fmt: skip
    project.write_agent(model)
    chat_server.queue(ServedReply(text="Fine."))

    run = project.hookgate("-p", "Hi")

    assert (run.returncode, run.stdout) == (0, "Fine.\n"), run.stderr
    body = chat_server.requests[0].body
    assert body["tool_choice"] == "none"
    assert body["top_k"] == 20
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


#: How a shell starts hookgate with a signal ignored, and that signal.
IGNORING = {
    "nohup, then SIGHUP": (["nohup"], signal.SIGHUP),
    "a background job, then SIGINT": (["sh", "-c", 'trap "" INT; exec "$0" "$@"'], signal.SIGINT),
}


@pytest.mark.parametrize(("prefix", "signum"), IGNORING.values(), ids=IGNORING.keys())
def test_a_signal_started_ignored_is_ignored_and_the_answer_comes(
    project: Project, prefix: list[str], signum: signal.Signals
) -> None:
    """`nohup hookgate -p …` asks to outlive its terminal, and a background job to
    outlive a Ctrl-C: the signal changes nothing."""
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "echo $$ > started; sleep 1"}}]},
        {"text": "finished"},
    )
    project.write_agent(model, yolo=True)
    project.trust()
    process = subprocess.Popen(
        [*prefix, str(HOOKGATE), "-p", "Run it"], cwd=project.dir, env=project.env(),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for_pid_file(project.dir / "started", process)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=PROMPT_EXIT_S * 20)
    finally:
        process.kill()

    assert process.returncode == 0, stderr
    assert stdout == "finished\n"
    assert "interrupted" not in stderr
