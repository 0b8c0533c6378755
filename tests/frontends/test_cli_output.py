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


#: sysexits.h's EX_IOERR: stdout could not be written (docs/runtime.md).
EXIT_OUTPUT_FAILED = 74
#: The one line a full stdout leaves on stderr.
FULL = "hookgate: cannot write to stdout: No space left on device; stopped\n"
#: An ACP client's first request.
INITIALIZE = (
    b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}\n'
)


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["-p", "hi"], b""),
        (["hooks", "schema", "preToolCall"], b""),
        (["window", "--no-browser"], b""),
        (["acp"], INITIALIZE),
    ],
    ids=["print", "schema", "window", "acp"],
)
def test_a_full_stdout_is_one_line_and_its_exit_code(
    project: Project, args: list[str], stdin: bytes
) -> None:
    """`> /dev/full`: the command stops, says so in one line, and exits 74, where it
    printed a traceback and exited 1 (ACP: exited 0, silently)."""
    project.write_agent(project.script({"text": "an answer"}))
    project.trust()
    with open("/dev/full", "wb") as full:
        run = subprocess.run(
            [str(HOOKGATE), *args], cwd=project.dir, env=project.env(), input=stdin,
            stdout=full, stderr=subprocess.PIPE, timeout=60, check=False,
        )  # fmt: skip
    stderr = run.stderr.decode()
    assert run.returncode == EXIT_OUTPUT_FAILED, stderr
    assert stderr.endswith(FULL), stderr
    assert "Traceback" not in stderr


def test_acp_whose_stdout_the_editor_closed_stops_at_once(project: Project) -> None:
    """The editor closes its end of our stdout and keeps stdin open: hookgate acp stops
    (not at the end of stdin, which never comes), in one line, with SIGPIPE's code."""
    project.write_agent(project.script({"text": "an answer"}))
    project.trust()
    process = subprocess.Popen(
        [str(HOOKGATE), "acp"], cwd=project.dir, env=project.env(),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        assert b'"id":0' in process.stdout.readline()
        process.stdout.close()  # the editor's end; stdin stays open
        code = process.wait(timeout=30)
        stderr = process.stderr.read().decode() if process.stderr else ""
    finally:
        process.kill()
        process.stdin.close()
    assert code == EXIT_BROKEN_PIPE, stderr
    assert stderr.endswith(
        "hookgate: stdout was closed (the editor left); every session was closed\n"
    ), stderr
    assert "Traceback" not in stderr
