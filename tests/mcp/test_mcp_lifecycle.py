"""MCP servers that fail: never a hung turn, never a crash, never a process left behind.

A server that does not start is a notice and its tools are absent; a call to a server
that crashes or hangs is a failed tool result within the server's `timeout`; closing
the session stops every server it started, and cancelling a turn stops its call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.turn import Answered, run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView, read_log
from support.mcp_peers import stdio_server

pytestmark = pytest.mark.anyio

#: The `timeout:` given to servers that are meant to hang.
SHORT_TIMEOUT = 1.0
#: Seconds a failure may take to reach the model, well under any default timeout.
PROMPT_FAILURE_S = 5.0


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": f"mcp__test__{tool}", "arguments": arguments}]}


async def test_crash_mid_call_is_a_failed_result_at_once_and_later_calls_fail_too(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script(
        call("crash"),
        {"expect": "MCP server 'test'", "tool_calls": call("echo", text="hi")["tool_calls"]},
        {"expect": "[mcp__test__echo failed", "text": "The server is gone."},
    )
    project.write_agent(model, yolo=True, mcp_servers={"test": stdio_server()})
    agent = await open_project_agent()
    view = RecordingView()

    started = time.monotonic()
    outcome = await run_turn(agent, "crash it", view)

    assert time.monotonic() - started < PROMPT_FAILURE_S
    assert outcome == Answered("The server is gone.")
    crashed, after = (result for _, result in view.finished)
    assert crashed.is_error
    assert "closed the connection" in crashed.content
    assert after.is_error


async def test_hung_call_fails_after_the_server_timeout_and_the_server_still_answers(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script(
        call("hang"),
        {
            "expect": "no answer within 1 s",
            "tool_calls": call("echo", text="still here")["tool_calls"],
        },
        {"expect": "echo: still here", "text": "It hung once."},
    )
    project.write_agent(model, yolo=True, mcp_servers={"test": stdio_server(timeout=SHORT_TIMEOUT)})
    agent = await open_project_agent()

    started = time.monotonic()
    outcome = await run_turn(agent, "hang", RecordingView())

    assert SHORT_TIMEOUT <= time.monotonic() - started < SHORT_TIMEOUT + PROMPT_FAILURE_S
    assert outcome == Answered("It hung once.")


async def test_server_that_does_not_start_is_a_notice_and_its_tools_are_absent(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    project.write_agent(
        "scripted:none.yaml",
        mcp_servers={
            "missing": {"command": str(tmp_path / "no-such-server")},
            "exits": {"command": "sh", "args": ["-c", "exit 3"]},
            "test": stdio_server(),
        },
    )
    (project.dir / "none.yaml").write_text("- text: unused\n")
    notices: list[str] = []

    agent = await open_project_agent(notify=notices.append)

    mcp_tools = [name for name in agent.gate.tools.names() if name.startswith("mcp__")]
    assert mcp_tools
    assert all(name.startswith("mcp__test__") for name in mcp_tools)
    exits, missing = sorted(notices)
    assert exits.startswith("MCP server 'exits' did not start: ")
    assert missing.startswith("MCP server 'missing' did not start: command not found: ")
    assert "no-such-server" in missing
    assert all(n.endswith("; its tools are not available") for n in notices)


async def test_server_that_hangs_on_start_is_given_up_and_stopped(
    project: Project,
    open_project_agent: OpenAgent,
    tmp_path: Path,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
) -> None:
    pid_file = tmp_path / "silent.pid"
    silent = {"command": "sh", "args": ["-c", f"echo $$ > {pid_file}; exec sleep 60"]}
    project.write_agent(
        "scripted:none.yaml", mcp_servers={"silent": {**silent, "start_timeout": 1}}
    )
    (project.dir / "none.yaml").write_text("- text: unused\n")
    notices: list[str] = []

    started = time.monotonic()
    agent = await open_project_agent(notify=notices.append)

    assert time.monotonic() - started < 1 + PROMPT_FAILURE_S
    assert notices == [
        "MCP server 'silent' did not start: no answer within 1 s; its tools are not available"
    ]
    assert not any(name.startswith("mcp__") for name in agent.gate.tools.names())
    group_gone(read_pid(pid_file))  # a stdio server is the leader of its own group


async def test_closing_the_session_stops_every_server_it_started(
    project: Project,
    open_project_agent: OpenAgent,
    tmp_path: Path,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
) -> None:
    idle, busy = tmp_path / "idle.pid", tmp_path / "busy.pid"
    model = project.script(call("hang"))
    project.write_agent(
        model,
        yolo=True,
        mcp_servers={
            "idle": stdio_server(pid_file=idle),
            "test": stdio_server(pid_file=busy),
        },
    )
    agent = await open_project_agent()
    turn = asyncio.ensure_future(run_turn(agent, "hang", RecordingView()))
    await asyncio.sleep(0.5)  # the hang call is in flight

    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    await agent.aclose()

    group_gone(read_pid(idle))
    group_gone(read_pid(busy))


async def test_cancelling_a_turn_stops_its_hung_call_and_post_generation_runs(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    project.write_agent(
        project.script(call("hang")),
        yolo=True,
        mcp_servers={"test": stdio_server()},
        hooks={"postGeneration": [project.recorder(log)]},
    )
    agent = await open_project_agent()
    turn = asyncio.ensure_future(run_turn(agent, "hang", RecordingView()))
    await asyncio.sleep(0.5)

    started = time.monotonic()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    assert time.monotonic() - started < PROMPT_FAILURE_S
    assert [entry["outcome"] for entry in read_log(log)] == ["cancelled"]
