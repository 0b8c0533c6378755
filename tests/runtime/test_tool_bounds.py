"""Tools are bounded: a backtracking grep neither hangs a turn nor outlives a signal.

Through the real `hookgate -p` subprocess, with the scripted model asking for the
grep a hostile model would.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from runtime.project import Project

#: Seconds from a signal to hookgate's exit that count as prompt (as in test_signals).
PROMPT_EXIT_S = 5.0
#: Seconds the run may take to reach the grep on a loaded machine.
REACH_S = 20.0


def grep_agent(project: Project, pattern: str, landmark: Path | None = None) -> None:
    grep = {"name": "grep", "arguments": {"pattern": pattern, "glob": "*.txt"}}
    model = project.script({"tool_calls": [grep]}, {"text": "done"})
    hooks = {}
    if landmark is not None:  # created right before the grep starts
        hooks = {"preToolCall": [{"name": "mark", "command": f': > "{landmark}"'}]}
    project.write_agent(model, tools=["grep"], hooks=hooks)


def test_the_nested_quantifier_of_the_report_answers_at_once(project: Project) -> None:
    (project.dir / "a.txt").write_text("a" * 34 + "!\n")
    grep_agent(project, "(a+)+$")
    result = project.hookgate("-p", "search")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    (answer,) = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert answer == "no matches for '(a+)+$'"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_hookgate_during_a_backtracking_grep(
    project: Project, tmp_path: Path, signum: signal.Signals
) -> None:
    (project.dir / "slow.txt").write_text(("a" * 60 + "!\n") * 200)
    landmark = tmp_path / "grep-started"
    grep_agent(project, "(a|aa)+$", landmark)
    process = project.start_hookgate("-p", "search")
    try:
        deadline = time.monotonic() + REACH_S
        while not landmark.exists():
            assert time.monotonic() < deadline, "the run never reached the grep"
            time.sleep(0.01)
        time.sleep(0.3)  # into the backtracking search
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=PROMPT_EXIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hookgate did not end within {PROMPT_EXIT_S}s of {signum.name}")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr


def test_shell_limits_from_the_agent_file_bind_the_shell_tool(project: Project) -> None:
    shell = {"name": "shell", "arguments": {"command": "ulimit -t; ulimit -f"}}
    model = project.script({"tool_calls": [shell]}, {"text": "done"})
    project.write_agent(model, yolo=True, shell={"limits": {"cpu_seconds": 9, "file_size": 2048}})
    result = project.hookgate("-p", "limits?")
    assert result.returncode == 0, result.stderr
    (answer,) = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert answer.split() == ["9", "2"]


@pytest.mark.parametrize(
    ("shell", "message"),
    [
        ({"limits": {"processes": 0}}, "processes: expected a positive whole number"),
        ({"limits": {"cpu": 5}}, "unknown key 'cpu'"),
        ({"limits": {"file_size": 2**70}}, "file_size: expected a positive whole number up to"),
        ({"env": {"keep": "OPENAI_API_KEY"}}, "keep: expected a list of variable names"),
    ],
)
def test_a_bad_shell_setting_names_its_line_and_key(
    project: Project, shell: dict[str, object], message: str
) -> None:
    project.write_agent(project.script({"text": "hi"}), shell=shell)
    result = project.hookgate("-p", "hi")
    assert result.returncode == 1
    assert "hookgate.yaml:" in result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


SECRETS = {
    "OPENAI_API_KEY": "sk-never-in-a-tool",
    "AWS_SECRET_ACCESS_KEY": "aws-never-in-a-tool",
    "github_token": "ghp-never-in-a-tool",
    "DB_PASSWORD": "pw-never-in-a-tool",
    "GCP_CREDENTIALS": "gcp-never-in-a-tool",
}


def test_secrets_in_the_environment_never_reach_the_shell_tool(project: Project) -> None:
    shell = {"name": "shell", "arguments": {"command": "env"}}
    model = project.script({"tool_calls": [shell]}, {"text": "done"})
    project.write_agent(model, yolo=True, shell={"env": {"keep": ["GCP_CREDENTIALS"]}})
    result = project.hookgate("-p", "env?", env=project.env(**SECRETS, HARMLESS="visible"))
    assert result.returncode == 0, result.stderr
    (answer,) = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert "HARMLESS=visible" in answer
    assert "GCP_CREDENTIALS=gcp-never-in-a-tool" in answer  # kept by shell.env.keep
    every_file = "".join(path.read_text() for path in project.files_under_home())
    for name, value in SECRETS.items():
        if name != "GCP_CREDENTIALS":
            assert value not in answer
            assert value not in every_file
