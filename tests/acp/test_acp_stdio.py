"""`hookgate acp` on its pipes, byte for byte: stdout is JSON-RPC and nothing else.

These tests write the protocol by hand, so that any stray byte on stdout is seen
(the ACP client would skip a line it cannot parse).
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runtime.project import HOOKGATE, RUN_TIMEOUT, Project
from support.mcp_peers import stdio_server

pytestmark = pytest.mark.anyio


class RawAgent:
    """`hookgate acp` with its stdin and stdout as JSON lines; stdout kept whole."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[bytes] = []
        self._ids = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request; read stdout until its response, which is returned."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._ids += 1
        message = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), RUN_TIMEOUT)
            assert line, "hookgate acp closed stdout"
            self.lines.append(line)
            received = json.loads(line)
            if received.get("id") == self._ids and "method" not in received:
                return received

    async def finish(self) -> tuple[bytes, bytes]:
        """Close stdin (the editor leaves); the rest of stdout, and all of stderr."""
        assert self.process.stdin is not None
        self.process.stdin.close()  # communicate() without input leaves stdin open
        rest, errors = await asyncio.wait_for(self.process.communicate(), RUN_TIMEOUT)
        self.lines += rest.splitlines(keepends=True)
        return rest, errors


async def start_raw(project: Project) -> RawAgent:
    project.trust()
    process = await asyncio.create_subprocess_exec(
        str(HOOKGATE),
        "acp",
        cwd=project.dir,
        env=project.env(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    return RawAgent(process)


async def test_stdout_carries_only_json_rpc_while_notices_go_to_stderr(project: Project) -> None:
    noisy = project.hook("noisy", "cat >/dev/null; echo 'hook noise' >&2; exit 0")
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "echo out; echo err >&2"}}]},
        {"expect": "out", "text": "Done."},
    )
    project.write_agent(
        model,
        yolo=True,
        mcp_servers={"broken": {"command": "no-such-server"}},
        hooks={event: [{"command": noisy}] for event in ("preGeneration", "preToolCall")},
    )
    agent = await start_raw(project)

    await agent.request("initialize", {"protocolVersion": 1})
    session = await agent.request("session/new", {"cwd": str(project.dir), "mcpServers": []})
    answer = await agent.request(
        "session/prompt",
        {"sessionId": session["result"]["sessionId"], "prompt": [{"type": "text", "text": "go"}]},
    )
    _, errors = await agent.finish()

    assert answer["result"]["stopReason"] == "end_turn"
    assert agent.process.returncode == 0
    for line in agent.lines:
        assert line.endswith(b"\n")
        assert json.loads(line)["jsonrpc"] == "2.0", line
    stderr = errors.decode()
    assert "hookgate: MCP server 'broken' did not start" in stderr


async def test_a_broken_agent_file_is_one_line_on_stderr_and_exit_1(project: Project) -> None:
    project.agent_file.write_text("model: scripted:s.yaml\nmcp_servers: {docs: {comand: x}}\n")
    agent = await start_raw(project)

    stdout, stderr = await agent.finish()

    assert agent.process.returncode == 1
    assert stdout == b""
    assert stderr.decode().startswith(f"hookgate: {project.agent_file}:2: mcp_servers.docs: ")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (None, 0)])
async def test_leaving_stops_the_sessions_mcp_servers(
    project: Project,
    tmp_path: Path,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    signum: signal.Signals | None,
    code: int,
) -> None:
    """On SIGTERM, or when the editor closes stdin, no MCP server outlives hookgate."""
    pid_file = tmp_path / "server.pid"
    project.write_agent(
        project.script({"text": "unused"}), mcp_servers={"test": stdio_server(pid_file=pid_file)}
    )
    agent = await start_raw(project)
    await agent.request("initialize", {"protocolVersion": 1})
    await agent.request("session/new", {"cwd": str(project.dir), "mcpServers": []})
    server_pid = read_pid(pid_file)

    if signum is not None:
        agent.process.send_signal(signum)
    stdout, _ = await agent.finish()

    assert agent.process.returncode == code
    assert stdout == b""
    group_gone(server_pid)
