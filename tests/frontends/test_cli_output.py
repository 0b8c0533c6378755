"""What the CLI prints around the product: the sessions table, `--version`, and a
reader that stops early (`| head`) ending the output quietly, with no traceback."""

from __future__ import annotations

import os
import signal
import subprocess
from importlib.metadata import version

import pytest

from runtime.project import HOOKGATE, Project

#: What a shell reports for a writer a closed pipe stopped, as for `yes | head -1`.
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def test_sessions_is_a_table_of_what_a_user_picks_a_session_by(project: Project) -> None:
    project.write_agent(project.script({"text": "One."}, {"text": "Two."}))
    assert project.hookgate("-p", "What is in\nthis repo?").returncode == 0
    assert project.hookgate("-c", "-p", "And then?").returncode == 0

    run = project.hookgate("sessions")

    assert run.returncode == 0, run.stderr
    header, row = run.stdout.splitlines()
    assert header.split() == ["ID", "DATE", "DIRECTORY", "AGENT", "FIRST", "QUESTION", "TURNS"]
    assert row.startswith(project.session_id())
    assert str(project.dir) in row
    assert "hookgate.yaml" in row
    assert "What is in this repo?" in row  # one line, whatever the question held
    assert row.split()[-1] == "2"
    assert "SessionInfo(" not in run.stdout


def test_sessions_without_any_says_so_on_stderr(project: Project) -> None:
    run = project.hookgate("sessions")

    assert (run.returncode, run.stdout) == (0, "")
    assert "no saved sessions" in run.stderr


def test_version(project: Project) -> None:
    run = project.hookgate("--version")

    assert (run.returncode, run.stdout.strip()) == (0, f"hookgate {version('hookgate')}")


@pytest.mark.parametrize("columns", [60, 100])
def test_help_is_wrapped_to_the_terminals_width(project: Project, columns: int) -> None:
    for args in (["--help"], ["hooks", "fire", "--help"], ["trust", "--help"]):
        run = project.hookgate(*args, env=project.env(COLUMNS=str(columns)))

        assert run.returncode == 0, run.stderr
        widest = max(len(line) for line in run.stdout.splitlines())
        # argparse wraps at the width less two, and never breaks a long option's name.
        assert columns - 12 <= widest <= columns - 2, (args, widest)


@pytest.mark.parametrize(
    "args",
    [
        ("hooks", "schema", "preToolCall"),
        ("hooks", "fire", "preGeneration"),
        ("-p", "Say a lot"),
    ],
)
def test_a_reader_that_stopped_reading_ends_the_output_quietly(
    project: Project, args: tuple[str, ...]
) -> None:
    context = """python3 -c 'import json; print(json.dumps({"context": "x" * 100000}))'"""
    project.write_agent(
        project.script({"text": "word " * 100_000}),
        hooks={"preGeneration": [{"name": "say", "command": context}]},
    )
    project.trust()
    # `| head` once head has exited: stdout is a pipe nobody reads any more.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        run = subprocess.run(
            [str(HOOKGATE), *args], cwd=project.dir, env=project.env(), input=b'{"prompt": "hi"}',
            stdout=write_end, stderr=subprocess.PIPE, timeout=30, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)

    assert run.stderr.decode() == ""
    assert run.returncode == EXIT_BROKEN_PIPE
