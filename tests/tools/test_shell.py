"""The shell tool runs real bash processes: output, exit status, cwd, limits, the group kill."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hookgate.tools import ToolContext, ToolResult
from hookgate.tools.shell import ShellTool

RunTool = Callable[..., ToolResult]
SHELL = ShellTool()


def test_stdout_then_stderr(run_tool: RunTool) -> None:
    result = run_tool(SHELL, {"command": "echo out; echo err >&2"})
    assert result.content == "out\n[stderr]\nerr"
    assert not result.is_error


@pytest.mark.parametrize("status", [1, 3, 127])
def test_non_zero_exit_is_reported_as_an_error(run_tool: RunTool, status: int) -> None:
    result = run_tool(SHELL, {"command": f"echo partial; exit {status}"})
    assert result.content == f"partial\n[exit {status}]"
    assert result.is_error


def test_success_without_output(run_tool: RunTool) -> None:
    assert run_tool(SHELL, {"command": "true"}).content == "[no output]"


def test_death_by_signal_is_named(run_tool: RunTool) -> None:
    result = run_tool(SHELL, {"command": "kill -SEGV $$"})
    assert result.content == "[killed by signal SIGSEGV]"
    assert result.is_error


def test_runs_in_the_project_directory(run_tool: RunTool, project: Path) -> None:
    (project / "marker.txt").write_text("here")
    result = run_tool(SHELL, {"command": "pwd -P; cat marker.txt"})
    assert result.content == f"{project}\nhere"


def test_uses_the_context_environment(run_tool: RunTool, ctx: ToolContext) -> None:
    context = ctx._replace(env={**ctx.env, "HOOKGATE_TEST_VALUE": "from ctx"})
    result = run_tool(SHELL, {"command": "echo $HOOKGATE_TEST_VALUE"}, context)
    assert result.content == "from ctx"


def test_timeout_kills_the_whole_group(
    run_tool: RunTool, group_gone: Callable[[int], None]
) -> None:
    started = time.monotonic()
    command = "echo $(ps -o pgid= $$); sleep 100 & sleep 100"
    result = run_tool(SHELL, {"command": command, "timeout": 0.5})
    assert time.monotonic() - started < 5
    assert result.is_error
    assert result.content.endswith("[timed out after 0.5s; process group killed]")
    group_gone(int(result.content.split()[0]))  # the group of bash and its reaper


def test_output_that_never_ends_is_stopped_at_the_timeout(
    run_tool: RunTool, ctx: ToolContext
) -> None:
    """A model's `cat /dev/zero` writes as fast as the agent reads: it must still be
    stopped at its timeout, its output capped, and the agent go on."""
    context = ctx._replace(output_cap=1000)
    started = time.monotonic()
    result = run_tool(SHELL, {"command": "cat /dev/zero | tr '\\0' z", "timeout": 0.5}, context)
    assert time.monotonic() - started < 0.5 + 1.5
    assert result.is_error
    text, truncated, timed_out = result.content.rsplit("\n", 2)
    assert text == "z" * 1000
    assert (truncated, timed_out) == (
        "[output truncated at 1000 bytes]",
        "[timed out after 0.5s; process group killed]",
    )


def test_background_child_is_killed_when_the_command_ends(
    run_tool: RunTool, group_gone: Callable[[int], None]
) -> None:
    result = run_tool(SHELL, {"command": "sleep 100 >/dev/null 2>&1 & ps -o pgid= $$"})
    assert not result.is_error
    group_gone(int(result.content))


def test_timeout_argument_is_capped_by_the_context(run_tool: RunTool, ctx: ToolContext) -> None:
    context = ctx._replace(shell_timeout=0.3)
    result = run_tool(SHELL, {"command": "sleep 30", "timeout": 1000}, context)
    assert result.content == "[timed out after 0.3s; process group killed]"


def test_cancellation_propagates_and_kills_the_group(
    ctx: ToolContext, project: Path, group_gone: Callable[[int], None]
) -> None:
    pid_fifo = project / "pid"
    os.mkfifo(pid_fifo)
    pid = 0

    async def cancel_midway() -> None:
        nonlocal pid
        task = asyncio.create_task(SHELL.run({"command": f"echo $$ > {pid_fifo}; sleep 100"}, ctx))
        pid = int(await asyncio.to_thread(pid_fifo.read_text))  # the command is running now
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(cancel_midway(), 10))
    group_gone(pid)


def test_output_is_capped(run_tool: RunTool, ctx: ToolContext) -> None:
    context = ctx._replace(output_cap=1000)
    result = run_tool(SHELL, {"command": "head -c 100000 /dev/zero | tr '\\0' a"}, context)
    text, note = result.content.rsplit("\n", 1)
    assert text == "a" * 1000
    assert note == "[output truncated at 1000 bytes]"
    assert not result.is_error


def test_stderr_keeps_half_the_cap_when_stdout_floods(run_tool: RunTool, ctx: ToolContext) -> None:
    context = ctx._replace(output_cap=1000)
    command = "head -c 5000 /dev/zero | tr '\\0' o; echo; head -c 5000 /dev/zero | tr '\\0' e >&2"
    result = run_tool(SHELL, {"command": command}, context)
    stdout, rest = result.content.split("\n[stderr]\n")
    stderr, note = rest.rsplit("\n", 1)
    assert (stdout, stderr) == ("o" * 500, "e" * 500)
    assert note == "[output truncated at 1000 bytes]"


def test_invalid_utf8_output_is_replaced_not_fatal(run_tool: RunTool) -> None:
    result = run_tool(SHELL, {"command": "printf 'ok \\377\\n'"})
    assert result.content == "ok \ufffd"


def test_missing_bash_is_a_failed_call(run_tool: RunTool, ctx: ToolContext, tmp_path: Path) -> None:
    context = ctx._replace(env={"PATH": str(tmp_path / "empty")})
    result = run_tool(SHELL, {"command": "true"}, context)
    assert result.is_error
    assert result.content.startswith("cannot run the command: 'bash' not found")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "missing required argument 'command'"),
        ({"command": 5}, "argument 'command' must be a string, got 5"),
        ({"command": "  "}, "argument 'command' must not be empty"),
        (
            {"command": "true", "timeout": 0},
            "argument 'timeout' must be more than 0 seconds, got 0",
        ),
        ({"command": "true", "timeout": "5"}, "argument 'timeout' must be a number, got '5'"),
        ({"command": "true", "timeout": True}, "argument 'timeout' must be a number, got True"),
        ({"command": "true", "cwd": "/"}, "unknown argument 'cwd' (expected: command, timeout)"),
    ],
)
def test_bad_arguments_are_failed_calls(
    run_tool: RunTool, arguments: dict[str, object], message: str
) -> None:
    result = run_tool(SHELL, arguments)
    assert (result.content, result.is_error) == (message, True)


def test_needs_consent() -> None:
    assert SHELL.needs_consent is True
    assert SHELL.spec.name == "shell"
