"""stdout that fails under a command: full, or closed by its reader (an editor).

Every command stops with one line on stderr and a documented exit code (74 for a write
error, 141 for a reader that left), never a traceback, and never keeps serving nobody.
"""

from __future__ import annotations

import signal
import subprocess

import pytest

from runtime.project import HOOKGATE, Project

#: What a shell reports for a writer a closed pipe stopped, as for `yes | head -1`.
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


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
@pytest.mark.reliability("signals")
def test_a_full_stdout_is_one_line_and_its_exit_code(
    project: Project, args: list[str], stdin: bytes
) -> None:
    """A command whose stdout is full (`> /dev/full`): one line on stderr, exit 74, no traceback.

    `> /dev/full`: the command stops, says so in one line, and exits 74, where it
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


@pytest.mark.reliability("signals")
def test_acp_whose_stdout_the_editor_closed_stops_at_once(project: Project) -> None:
    """`hookgate acp` whose stdout the editor closed, stdin still open: it stops at once, one line, 141.

    The editor closes its end of our stdout and keeps stdin open: hookgate acp stops
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
