"""`hookgate acp` against a hostile or impatient editor: no line kills it, no repeat cuts an audit.

The raw-pipe client writes lines that are not JSON-RPC messages (unparsable text, bytes
that are not UTF-8, `[]`, `42`, `"x"`, `null`, a batch, a request without a method);
each gets its JSON-RPC error reply, and then the SDK's own client, on the same pipes,
runs a turn whose audit hook writes its record. Any bytes at all are checked the same
way in process (hypothesis). Cancels and signals repeated while the audit hook runs
leave its record whole; an escaped hook daemon leaves no zombie behind.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.client.connection import ClientSideConnection
from hypothesis import given
from hypothesis import strategies as st

from hookgate.frontends.acp.wire import Refusal, checked_message
from reliability.faultkit import (
    PROCESS_MARGIN_S,
    assert_nothing_left,
    bounded,
    events_in,
    marked_env,
    record_to,
)
from runtime.project import Project
from support.acp_client import RecordingClient
from support.acp_raw import NOT_MESSAGES, RawAgent, start_raw, wait_until

pytestmark = pytest.mark.anyio

#: Seconds the slow audit hook takes: the repeated cancels and signals land inside it.
SLOW_AUDIT_S = 1.0
#: Seconds between two repeated cancels or signals, as an impatient editor sends them.
REPEAT_S = 0.3
#: Seconds an escaped daemon lives: it exits while the agent sits idle.
DAEMON_S = 0.2


def written(path: Path) -> Callable[[], bool]:
    return lambda: path.exists() and path.read_text().strip() != ""


async def open_session(agent: RawAgent, project: Project) -> dict[str, Any]:
    """Initialize and open a session; the params of a prompt to it."""
    await agent.request("initialize", {"protocolVersion": 1})
    session = await agent.request("session/new", {"cwd": str(project.dir), "mcpServers": []})
    return {"sessionId": session["result"]["sessionId"], "prompt": [text_block("go").model_dump()]}


@pytest.mark.reliability("fuzzing")
@pytest.mark.parametrize(
    ("line", "code", "ident"), NOT_MESSAGES, ids=[repr(m[0]) for m in NOT_MESSAGES]
)
async def test_acp_line_that_is_not_a_message(
    project: Project, tmp_path: Path, mark: str, line: bytes, code: int, ident: int | None
) -> None:
    """This line on ACP's stdin gets its JSON-RPC error; the SDK's client then runs a turn, audited."""
    log = tmp_path / "audit.log"
    hooks = {"postGeneration": [{"command": record_to(log)}]}
    project.write_agent(project.script({"text": "still here"}), hooks=hooks)

    with bounded(PROCESS_MARGIN_S):
        agent = await start_raw(project, marked_env(project, mark))
        reply = await agent.refused(line)
        assert agent.process.stdin is not None
        assert agent.process.stdout is not None
        async with ClientSideConnection(
            RecordingClient(), agent.process.stdin, agent.process.stdout
        ) as conn:
            await conn.initialize(protocol_version=1)
            session = await conn.new_session(cwd=str(project.dir), mcp_servers=[])
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        _, errors = await agent.finish()

    assert (reply["error"]["code"], reply["id"]) == (code, ident)
    assert answer.stop_reason == "end_turn"
    assert events_in(log) == [("postGeneration", "answered")]
    assert (agent.process.returncode, b"Traceback" in errors) == (0, False), errors
    assert_nothing_left(mark)


@pytest.mark.reliability("fuzzing")
@given(st.binary(max_size=200) | st.recursive(st.none() | st.integers() | st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)).map(lambda value: json.dumps(value).encode()))  # fmt: skip
def test_any_acp_line_is_a_message_or_an_error_reply(line: bytes) -> None:
    """Any bytes as an ACP line: a well-formed message for the SDK, or an error reply (never an exception)."""
    checked = checked_message(line)
    if isinstance(checked, Refusal):
        reply = checked.reply()
        assert reply["error"]["code"] in (-32700, -32600)
        assert reply["id"] is None or type(reply["id"]) in (int, str)
    elif checked is not None:
        assert isinstance(checked, dict)
        assert isinstance(checked.get("method"), str) or "result" in checked or "error" in checked


@pytest.mark.reliability("signals")
@pytest.mark.parametrize("repeat", ["session/cancel", "SIGTERM", "SIGHUP"])
async def test_acp_repeated_cancel_while_post_generation_runs(
    project: Project, tmp_path: Path, mark: str, repeat: str
) -> None:
    """Three of these 0.3 s apart during a turn: postGeneration runs once, whole; nothing left."""
    log, began = tmp_path / "audit.log", tmp_path / "began"
    started = project.dir / "started"  # the tool's sandbox writes in the workspace
    audit = f': > "{began}"; sleep {SLOW_AUDIT_S}; {record_to(log)}'
    command = f"echo $$ > {started}; sleep 30"
    project.write_agent(
        project.script({"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}),
        yolo=True,
        hooks={"postGeneration": [{"command": audit}]},
    )
    agent = await start_raw(project, marked_env(project, mark))
    prompt = await open_session(agent, project)
    assert agent.process.stdin is not None
    message = {"jsonrpc": "2.0", "id": 99, "method": "session/prompt", "params": prompt}
    agent.process.stdin.write(json.dumps(message).encode() + b"\n")
    await wait_until(written(started))

    with bounded(SLOW_AUDIT_S + PROCESS_MARGIN_S):
        for _ in range(3):
            if repeat == "session/cancel":
                cancel = {
                    "jsonrpc": "2.0",
                    "method": repeat,
                    "params": {"sessionId": prompt["sessionId"]},
                }
                agent.process.stdin.write(json.dumps(cancel).encode() + b"\n")
            else:
                agent.process.send_signal(getattr(signal, repeat))
            await asyncio.sleep(REPEAT_S)
        _, errors = await agent.finish()

    code = {"session/cancel": 0, "SIGTERM": 143, "SIGHUP": 129}[repeat]
    assert agent.process.returncode == code, errors
    assert events_in(log) == [("postGeneration", "cancelled")]
    assert b"Traceback" not in errors
    assert_nothing_left(mark)


@pytest.mark.reliability("hooks")
async def test_acp_escaped_hook_daemons_leave_no_zombie(
    project: Project, tmp_path: Path, mark: str
) -> None:
    """A hook daemon that left its group (setsid) and exited is reaped at once by `hookgate acp`, turn after turn."""
    daemons = tmp_path / "daemons"
    escape = f"cat >/dev/null; setsid sh -c 'echo $$ >> \"{daemons}\"; sleep {DAEMON_S}' &"
    project.write_agent(
        project.script(*[{"text": f"turn {n}"} for n in range(3)]),
        hooks={"preGeneration": [{"command": escape}]},
    )
    agent = await start_raw(project, marked_env(project, mark))
    prompt = await open_session(agent, project)
    for _ in range(3):
        await agent.request("session/prompt", prompt)
    await wait_until(lambda: daemons.exists() and len(daemons.read_text().split()) == 3)
    pids = [int(pid) for pid in daemons.read_text().split()]

    with bounded(DAEMON_S + PROCESS_MARGIN_S):
        await wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids))
    _, errors = await agent.finish()

    assert agent.process.returncode == 0, errors
    assert_nothing_left(mark)
