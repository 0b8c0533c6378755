"""`hookgate acp` on its pipes, byte for byte: stdout is JSON-RPC and nothing else.

These tests write the protocol by hand, so that any stray byte on stdout is seen
(the ACP client would skip a line it cannot parse).
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from acp import text_block
from acp.client.connection import ClientSideConnection

from runtime.project import HOOKGATE, Project
from support.acp_client import RecordingClient
from support.acp_raw import NOT_MESSAGES, start_raw, wait_until
from support.mcp_peers import stdio_server

pytestmark = pytest.mark.anyio


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
    log, begun = tmp_path / "audit.log", tmp_path / "audit-began"
    started = project.dir / "started"  # the tool's sandbox writes in the workspace
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


def test_stdin_at_its_end_from_dev_null_is_a_quiet_exit(project: Project) -> None:
    """An editor, a script or a service manager may start it with nothing to read."""
    project.write_agent(project.script({"text": "unused"}))

    run = project.hookgate("acp")

    assert (run.returncode, run.stdout) == (0, "")
    assert "Traceback" not in run.stderr


def test_requests_from_a_file_are_answered_into_a_file(project: Project, tmp_path: Path) -> None:
    """stdin and stdout may be regular files (a recorded session replayed, answers logged)."""
    project.write_agent(project.script({"text": "unused"}))
    project.trust()
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": 1}}) + "\n"
        + "not json\n"
    )  # fmt: skip
    answers = tmp_path / "answers.jsonl"

    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        run = subprocess.run([str(HOOKGATE), "acp"], cwd=project.dir, env=project.env(),
                             stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=30,
                             check=False)  # fmt: skip

    assert run.returncode == 0, run.stderr
    replies = {reply["id"]: reply for reply in map(json.loads, answers.read_bytes().splitlines())}
    assert replies[0]["result"]["protocolVersion"] == 1
    assert replies[None]["error"]["code"] == -32700  # the line that was not JSON
