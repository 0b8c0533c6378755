"""Tools that hang or flood: the call fails or is cut in bounded time, and the turn goes on.

A shell command past `shell_timeout` (with a background job, or ignoring SIGTERM),
a shell command printing 100 MB on stdout or stderr, an MCP tool that never answers,
an MCP server that dies mid-call and one that writes without a line's end (its memory
bounded): each becomes a tool result the model reads,
naming what happened; the model answers, `postGeneration` runs, the session file is
whole and no process of the tool or the server is left.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.turn import Answered, run_turn
from reliability.faultkit import (
    FLOOD_BYTES,
    MARK_VAR,
    PROCESS_MARGIN_S,
    TURN_MARGIN_S,
    assert_nothing_left,
    assert_session_readable,
    bounded,
    events_in,
    marked_env,
    recorder,
)
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView
from support.mcp_peers import stdio_server

pytestmark = pytest.mark.anyio

#: `shell_timeout` of the agents here (whole seconds): short, so the quick profile stays quick.
SHELL_TIMEOUT_S = 1
#: `timeout` of the MCP server whose tool hangs; it bounds the server's start too, and a
#: loaded two-core runner takes over a second to start one.
MCP_TIMEOUT_S = 3.0
#: What the shell tool hands back at most (`ToolContext.output_cap`).
OUTPUT_CAP = 64 * 1024
ANSWER = "The tool misbehaved; I carried on."


@dataclass(frozen=True)
class ToolFault:
    """A tool call that misbehaves and what its result must say."""

    call: dict[str, Any]
    result: str
    """Text the result the model reads must hold."""
    timeout: float = 0
    """The timeout that ends it, if any (added to the case's bound)."""
    mcp: bool = False
    is_error: bool = True
    """A flood that exits 0 is a success, only cut."""
    peak_growth: int = 0
    """Bytes this process's peak resident memory may grow by during the turn (0: unchecked)."""


def shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def mcp(tool: str) -> dict[str, Any]:
    return {"name": f"mcp__test__{tool}", "arguments": {}}


TOOL_FAULTS: dict[str, ToolFault] = {
    "shell_hang": ToolFault(
        shell("sleep 60 & sleep 60"),
        f"[timed out after {SHELL_TIMEOUT_S:g}s; process group killed]",
        SHELL_TIMEOUT_S,
    ),
    "shell_hang_ignoring_sigterm": ToolFault(
        shell("trap '' TERM; sleep 60 & sleep 60"),
        f"[timed out after {SHELL_TIMEOUT_S:g}s; process group killed]",
        SHELL_TIMEOUT_S,
    ),
    "shell_flood_stdout": ToolFault(
        shell(f"yes flood | head -c {FLOOD_BYTES}"),
        f"[output truncated at {OUTPUT_CAP} bytes]",
        is_error=False,
    ),
    "shell_flood_stderr": ToolFault(
        shell(f"yes flood | head -c {FLOOD_BYTES} >&2; exit 3"),
        f"[output truncated at {OUTPUT_CAP} bytes]\n[exit 3]",
    ),
    "mcp_hang": ToolFault(
        mcp("hang"),
        f"[mcp__test__hang failed: MCP server 'test': no answer within {MCP_TIMEOUT_S:g} s]",
        MCP_TIMEOUT_S,
        mcp=True,
    ),
    "mcp_server_dies_mid_call": ToolFault(
        mcp("crash"),
        "[mcp__test__crash failed: MCP server 'test': it closed the connection",
        mcp=True,
    ),
    # The server writes forever and never ends its line: the connection is cut at the
    # cap, the server stopped; the turn goes on, its memory bounded (asserted below).
    "mcp_flood_without_a_line_end": ToolFault(
        mcp("flood"),
        "[mcp__test__flood failed: MCP server 'test': it sent more than 16 MiB without a "
        "line's end: stopped]",
        MCP_TIMEOUT_S,
        mcp=True,
        peak_growth=40 * 1024 * 1024,  # the 16 MiB cap read once (57 MB in 3 s, and on, before)
    ),
}


def peak_resident_memory(*, reset: bool = False) -> int:
    """This process's peak resident memory in bytes (`VmHWM`); `reset` first sets the
    peak to what is resident now (writing 5 to `clear_refs`)."""
    if reset:
        Path("/proc/self/clear_refs").write_text("5")
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)[1]) * 1024  # type: ignore[index]


def write_agent(project: Project, fault: ToolFault, post_log: Path, mark: str) -> None:
    """An agent that makes the faulty call, then answers once it has read the failure."""
    model = project.script({"tool_calls": [fault.call]}, {"expect": fault.result, "text": ANSWER})
    settings: dict[str, Any] = {}
    if fault.mcp:  # the SDK gives a server a minimal environment: the mark goes explicitly
        server = stdio_server(timeout=MCP_TIMEOUT_S, env={MARK_VAR: mark})
        settings["mcp_servers"] = {"test": server}
    project.write_agent(
        model,
        yolo=True,
        shell_timeout=SHELL_TIMEOUT_S,
        hooks={"postGeneration": [recorder(post_log)]},
        **settings,
    )


@pytest.mark.reliability("tools")
@pytest.mark.parametrize("name", TOOL_FAULTS)
async def test_tool_fault_in_a_turn(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path, mark: str, name: str
) -> None:
    """A tool that hangs or floods this way: a bounded, named failure the model reads; the turn answers."""
    fault = TOOL_FAULTS[name]
    post_log = tmp_path / "post.log"
    write_agent(project, fault, post_log, mark)
    view = RecordingView()

    agent = await open_project_agent()
    resident = peak_resident_memory(reset=True)
    with bounded(fault.timeout + TURN_MARGIN_S):
        outcome = await run_turn(agent, "Go.", view)
    await agent.aclose()
    grown = peak_resident_memory() - resident

    assert not fault.peak_growth or grown <= fault.peak_growth, f"{grown:,} bytes more at peak"
    assert outcome == Answered(ANSWER)
    ((_, result),) = view.finished
    assert result.is_error is fault.is_error
    assert fault.result in result.content
    assert len(result.content.encode()) <= OUTPUT_CAP + 200  # the cap, plus the status lines
    assert events_in(post_log) == [("postGeneration", "answered")]
    assert_session_readable(project.home)
    assert_nothing_left(mark)


@pytest.mark.reliability("tools")
@pytest.mark.parametrize("name", ["shell_hang", "mcp_flood_without_a_line_end"])
def test_tool_fault_under_print_mode(
    project: Project, tmp_path: Path, mark: str, group_gone: Callable[[int], None], name: str
) -> None:
    """`hookgate -p -v` whose shell call hangs, or whose MCP server floods: answered once
    the call is cut, stderr names why."""
    fault = TOOL_FAULTS[name]
    post_log = tmp_path / "post.log"
    write_agent(project, fault, post_log, mark)

    with bounded(fault.timeout + PROCESS_MARGIN_S):
        done = project.hookgate("-p", "Go.", "-v", env=marked_env(project, mark))

    assert (done.returncode, done.stdout) == (0, ANSWER + "\n"), done.stderr
    assert fault.result in done.stderr
    assert events_in(post_log) == [("postGeneration", "answered")]
    assert_session_readable(project.home)
    assert_nothing_left(mark)
