"""`hookgate acp` on its pipes, byte for byte: stdout is JSON-RPC and nothing else.

These tests write the protocol by hand, so that any stray byte on stdout is seen
(the ACP client would skip a line it cannot parse).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.client.connection import ClientSideConnection

from runtime.project import HOOKGATE, RUN_TIMEOUT, Project
from support.acp_client import RecordingClient
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

    async def refused(self, line: bytes) -> dict[str, Any]:
        """Write one raw line; the reply it gets, which must be an error."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()
        reply = await asyncio.wait_for(self.process.stdout.readline(), RUN_TIMEOUT)
        assert reply, f"hookgate acp closed stdout after {line!r}"
        received: dict[str, Any] = json.loads(reply)
        assert "error" in received, received
        return received

    async def finish(self) -> tuple[bytes, bytes]:
        """Close stdin (the editor leaves); the rest of stdout, and all of stderr."""
        assert self.process.stdin is not None
        self.process.stdin.close()  # communicate() without input leaves stdin open
        rest, errors = await asyncio.wait_for(self.process.communicate(), RUN_TIMEOUT)
        self.lines += rest.splitlines(keepends=True)
        return rest, errors


async def start_raw(project: Project) -> RawAgent:
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


#: Lines that are not one JSON-RPC message, the error code each gets, and the id it names.
NOT_MESSAGES = [
    (b"not json", -32700, None),
    (b"\xff\xfe{}", -32700, None),
    (b"[]", -32600, None),
    (b"42", -32600, None),
    (b'"x"', -32600, None),
    (b"null", -32600, None),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}]', -32600, None),
    (b'{"jsonrpc": "2.0", "id": 7}', -32600, 7),
    (b'{"jsonrpc": "2.0", "id": 8, "method": 5}', -32600, 8),
    (b'{"jsonrpc": "2.0", "id": [1], "method": "initialize"}', -32600, None),
]


async def test_no_line_ends_the_agent_and_the_sdk_client_goes_on(project: Project) -> None:
    """Each malformed line gets its JSON-RPC error; then the SDK's client, on the same
    pipes, opens a session and runs a turn as if nothing had happened."""
    project.write_agent(project.script({"text": "still here"}))
    agent = await start_raw(project)

    for line, code, ident in NOT_MESSAGES:
        reply = await agent.refused(line)
        assert (reply["error"]["code"], reply["id"]) == (code, ident), line
    # A response whose error is not an object is dropped: the next reply is the request's.
    agent.process.stdin.write(b'{"jsonrpc": "2.0", "id": 3, "error": "boom"}\n')  # type: ignore[union-attr]
    assert "result" in await agent.request("initialize", {"protocolVersion": 1})
    for cwd in ("relative/dir", str(project.dir / "missing"), None):
        reply = await agent.request("session/new", {"cwd": cwd, "mcpServers": []})
        assert reply["error"]["code"] == -32602, cwd

    client = RecordingClient()
    assert agent.process.stdin is not None
    assert agent.process.stdout is not None
    async with ClientSideConnection(client, agent.process.stdin, agent.process.stdout) as conn:
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(project.dir), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
    _, errors = await agent.finish()

    assert answer.stop_reason == "end_turn"
    assert client.text(session.session_id) == "still here"
    assert agent.process.returncode == 0
    assert "refused an ACP line (a batch is not a JSON-RPC message" in errors.decode()
    assert "Traceback" not in errors.decode()


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)]
)
async def test_repeated_signals_let_post_generation_finish_once(
    project: Project, tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    """The first signal cancels the turn; the next ones, while its audit hook runs, wait."""
    log, started, begun = tmp_path / "audit.log", tmp_path / "started", tmp_path / "audit-began"
    audit = project.hook("audit", f': > "{begun}"; input=$(cat); sleep 1; echo "$input" >> "{log}"')
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": f"touch {started}; sleep 30"}}]}
    )
    project.write_agent(model, yolo=True, hooks={"postGeneration": [{"command": audit}]})
    agent = await start_raw(project)
    await agent.request("initialize", {"protocolVersion": 1})
    session = await agent.request("session/new", {"cwd": str(project.dir), "mcpServers": []})
    assert agent.process.stdin is not None
    prompt = {
        "sessionId": session["result"]["sessionId"],
        "prompt": [{"type": "text", "text": "go"}],
    }
    message = {"jsonrpc": "2.0", "id": 99, "method": "session/prompt", "params": prompt}
    agent.process.stdin.write(json.dumps(message).encode() + b"\n")

    await wait_until(started.exists)
    agent.process.send_signal(signum)
    await wait_until(begun.exists)
    agent.process.send_signal(signum)
    agent.process.send_signal(signum)
    _, errors = await agent.finish()

    assert agent.process.returncode == code, errors.decode()
    assert [json.loads(line)["outcome"] for line in log.read_text().splitlines()] == ["cancelled"]


async def wait_until(found: Callable[[], bool]) -> None:
    """Wait until `found()` holds (a process of the agent makes it so)."""
    for _ in range(int(RUN_TIMEOUT / 0.02)):
        if found():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{found} did not hold within {RUN_TIMEOUT} s")


async def test_mcp_servers_die_with_a_hookgate_acp_killed_outright(
    project: Project,
    tmp_path: Path,
    read_pid: Callable[[Path], int],
    outlived: Callable[[int], None],
) -> None:
    """A server that does not exit when its stdin closes is stopped all the same."""
    pid_file = tmp_path / "server.pid"
    server = stdio_server()
    script = " ".join(shlex.quote(part) for part in [server["command"], *server["args"]])
    stubborn = {"command": "sh", "args": ["-c", f'echo $$ > "{pid_file}"; {script}; sleep 60']}
    project.write_agent(project.script({"text": "unused"}), mcp_servers={"test": stubborn})
    agent = await start_raw(project)
    await agent.request("initialize", {"protocolVersion": 1})
    await agent.request("session/new", {"cwd": str(project.dir), "mcpServers": []})
    server_pid = read_pid(pid_file)

    agent.process.kill()
    await agent.finish()

    outlived(server_pid)


async def test_escaped_hook_daemons_leave_no_zombies(project: Project, tmp_path: Path) -> None:
    """A hook's daemon that left its group (setsid) and exited is reaped at once: an
    editor that keeps `hookgate acp` for days must not collect one zombie per turn."""
    daemons = tmp_path / "daemons"
    escape = project.hook(
        "escape", f"cat >/dev/null; setsid sh -c 'echo $$ >> \"{daemons}\"; sleep 0.2' &"
    )
    project.write_agent(
        project.script({"text": "one"}, {"text": "two"}),
        hooks={"preGeneration": [{"command": escape}]},
    )
    agent = await start_raw(project)
    await agent.request("initialize", {"protocolVersion": 1})
    session = await agent.request("session/new", {"cwd": str(project.dir), "mcpServers": []})
    prompt = {
        "sessionId": session["result"]["sessionId"],
        "prompt": [{"type": "text", "text": "go"}],
    }
    for _ in range(2):
        await agent.request("session/prompt", prompt)
    await wait_until(lambda: daemons.exists() and len(daemons.read_text().split()) == 2)

    pids = [int(pid) for pid in daemons.read_text().split()]
    await wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids))
    await agent.finish()
