"""Nothing the shell tool started outlives the call: daemons, double forks, on timeout too.

Real bash, real processes; each case prints the pid of what it left behind, and that
pid must be gone (not even a zombie) once the call has returned.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hookgate.tools import ToolContext, ToolResult
from hookgate.tools.settings import ShellLimits
from hookgate.tools.shell import ShellTool

RunTool = Callable[..., ToolResult]
SHELL = ShellTool()
QUIET = ">/dev/null 2>&1 </dev/null"


def assert_gone(pid: int) -> None:
    assert not Path(f"/proc/{pid}").exists(), f"process {pid} outlived the shell call"


@pytest.mark.parametrize(
    "command",
    [
        f"setsid sleep 100 {QUIET} & echo $!",  # a new session: out of the process group
        f"(setsid sleep 100 {QUIET} & echo $!)",  # ... and its parent gone: an orphan
        "nohup setsid bash -c 'sleep 100 & echo $!' 2>/dev/null </dev/null",
        f"setsid bash -c 'sleep 100 {QUIET} & echo $!; exec sleep 100 {QUIET}' & sleep 0.1",
    ],
    ids=["setsid", "double-fork", "nohup-setsid-grandchild", "setsid-leader-alive"],
)
def test_a_daemon_is_gone_when_the_call_ends(run_tool: RunTool, command: str) -> None:
    result = run_tool(SHELL, {"command": command})
    assert not result.is_error, result.content
    assert_gone(int(result.content.split()[0]))


def test_a_daemon_is_gone_when_the_call_times_out(run_tool: RunTool) -> None:
    result = run_tool(SHELL, {"command": f"setsid sleep 100 {QUIET} & echo $!; sleep 30",
                              "timeout": 0.5})  # fmt: skip
    assert result.content.endswith("[timed out after 0.5s; process group killed]")
    assert_gone(int(result.content.split()[0]))


def test_the_limits_of_the_agent_file_bind_the_command(run_tool: RunTool, ctx: ToolContext) -> None:
    limits = ShellLimits(processes=50, cpu_seconds=7, file_size=4096)
    context = ctx._replace(shell_limits=limits)
    result = run_tool(SHELL, {"command": "ulimit -t; ulimit -f; ulimit -u"}, context)
    cpu, blocks, processes = result.content.split()
    assert (cpu, blocks) == ("7", "4")  # bash counts file size in 1024-byte blocks
    assert processes != "unlimited"


def test_a_file_past_the_size_limit_is_cut(run_tool: RunTool, ctx: ToolContext) -> None:
    context = ctx._replace(shell_limits=ShellLimits(file_size=1024))
    result = run_tool(SHELL, {"command": "head -c 5000 /dev/zero > big; stat -c %s big"}, context)
    assert result.content.startswith("1024")


def test_a_process_started_by_the_command_inherits_a_default_sigpipe(run_tool: RunTool) -> None:
    result = run_tool(SHELL, {"command": "yes | head -n 2"})
    assert result.content == "y\ny"
