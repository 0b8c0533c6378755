"""`hookgate acp` as an editor runs it: a subprocess driven by the ACP package's client.

What the editor receives is checked against golden files (`golden/`), and the golden
files against the ACP schema; what happened is checked on disk and in the hook logs.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError
from acp.schema import EnvVariable, McpServerStdio, PromptResponse

from runtime.project import Project, read_log, served_model
from support.acp_client import (
    AcpPeer,
    RecordingClient,
    StartPeer,
    check_golden,
    wait_for_file,
)
from support.chat_server import ChatServer, ServedReply
from support.mcp_peers import SERVER_SCRIPT, stdio_server

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).with_name("golden")
#: Seconds from `session/cancel` to the prompt's answer that count as "promptly": the
#: tool's process group gets its grace period, then postGeneration runs.
PROMPT_CANCEL_S = 5.0
#: The scripted model's delay in the concurrency test: two turns one after the other
#: take at least twice that, so less proves that they overlapped.
TURN_DELAY_S = 1.5
OVERLAPPED_S = 2 * TURN_DELAY_S


def reply_hook(project: Project, name: str, reply: dict[str, Any]) -> str:
    quoted = "'" + json.dumps(reply).replace("'", "'\"'\"'") + "'"
    return project.hook(name, f"cat >/dev/null; echo {quoted}")


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


async def test_initialize_says_what_hookgate_speaks(
    project: Project, start_peer: StartPeer
) -> None:
    project.write_agent(project.script({"text": "unused"}))

    async with start_peer() as peer:
        pass

    check_golden(GOLDEN / "initialize.json", peer.client.received, {0: "initialize"})


async def test_prompt_streams_tool_calls_asks_consent_and_shows_a_hooks_denial(
    project: Project, start_peer: StartPeer, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    (project.dir / "a.txt").write_text("hello\n")
    deny = {"action": "deny", "reason": "rm is not allowed"}
    model = project.script(
        {"text": "Let me look.", "tool_calls": [tool_call("list_files", pattern="*.txt")]},
        {
            "expect": "a.txt",
            "tool_calls": [tool_call("write_file", path="notes.txt", content="hi\n")],
        },
        {"expect": "notes.txt", "tool_calls": [tool_call("shell", command="rm -rf build")]},
        {"expect": "[denied by a hook: rm is not allowed]", "text": "Done."},
    )
    project.write_agent(
        model,
        hooks={
            "preToolCall": [{"matcher": "^shell$", "command": reply_hook(project, "no-rm", deny)}],
            "postGeneration": [project.recorder(log)],
        },
    )
    client = RecordingClient(answers=["allow_once"])

    async with start_peer(client) as peer:
        session = await peer.new_session()
        response = await peer.prompt(session, "Write notes, then clean up.")

    assert response.stop_reason == "end_turn"
    assert (project.dir / "notes.txt").read_text() == "hi\n"
    ((asked_in, asked, _),) = client.permissions  # only write_file: the hook denied first
    assert asked_in == session
    assert asked.raw_input == {"path": "notes.txt", "content": "hi\n"}
    finished = [u for u in client.tool_updates(session) if u.session_update == "tool_call_update"]
    assert [(u.tool_call_id, u.status) for u in finished] == [
        ("call_1", "completed"),
        ("call_2", "completed"),
        ("call_3", "failed"),
    ]
    assert finished[2].content[0].content.text == "[denied by a hook: rm is not allowed]"
    assert client.text(session) == "Let me look.Done."
    assert [entry["outcome"] for entry in read_log(log)] == ["answered"]
    check_golden(
        GOLDEN / "prompt_with_tool_calls.json",
        client.received,
        {0: "initialize", 1: "session/new", 2: "session/prompt"},
        session=session,
    )


async def test_consent_the_editor_rejects_or_cancels_denies_the_call(
    project: Project, start_peer: StartPeer
) -> None:
    write = {"tool_calls": [tool_call("write_file", path="notes.txt", content="x")]}
    model = project.script(
        write,
        {"expect": "[denied by the user]", "text": "Rejected."},
        write,
        {"expect": "[denied by the user]", "text": "Cancelled."},
    )
    project.write_agent(model)
    client = RecordingClient(answers=["reject_once", "cancelled"])

    async with start_peer(client) as peer:
        session = await peer.new_session()
        first = await peer.prompt(session, "write")
        second = await peer.prompt(session, "write again")

    assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    assert len(client.permissions) == 2
    assert not (project.dir / "notes.txt").exists()
    failed = [u for u in client.tool_updates(session) if u.status == "failed"]
    assert [u.content[0].content.text for u in failed] == ["[denied by the user]"] * 2
    assert client.text(session) == "Rejected.Cancelled."


def agent_with_a_long_command(project: Project, log: Path) -> Path:
    """An agent whose first turn runs a 30 s command; the file the command touches first."""
    started = project.dir / "started"
    model = project.script(
        {"tool_calls": [tool_call("shell", command=f"touch {started}; sleep 30")]},
        {"text": "Still here."},
    )
    project.write_agent(model, yolo=True, hooks={"postGeneration": [project.recorder(log)]})
    return started


async def prompt_into_the_long_command(
    peer: AcpPeer, started: Path
) -> tuple[str, asyncio.Future[PromptResponse]]:
    """A new session, and its prompt once the long command runs."""
    session = await peer.new_session()
    prompt = asyncio.ensure_future(peer.prompt(session, "run the long command"))
    await peer.client.wait_for(session, lambda u: u.session_update == "tool_call")
    await wait_for_file(started)
    return session, prompt


async def test_cancel_ends_the_prompt_as_cancelled_after_post_generation_ran(
    project: Project, start_peer: StartPeer, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    started = agent_with_a_long_command(project, log)

    async with start_peer() as peer:
        session, prompt = await prompt_into_the_long_command(peer, started)
        sent = time.monotonic()
        await peer.conn.cancel(session_id=session)
        response = await prompt
        took = time.monotonic() - sent
        after = await peer.prompt(session, "are you there?")

    assert response.stop_reason == "cancelled"
    assert took < PROMPT_CANCEL_S
    assert [entry["outcome"] for entry in read_log(log)] == ["cancelled", "answered"]
    assert after.stop_reason == "end_turn"
    assert peer.client.text(session).endswith("Still here.")


async def test_two_sessions_run_at_once_each_with_its_own_history(
    project: Project, start_peer: StartPeer, tmp_path: Path
) -> None:
    log = tmp_path / "pre.log"
    # One write per run: the two sessions' hooks append to the log at the same time.
    record = project.hook("record", f'line=$(cat); printf "%s\\n" "$line" >> "{log}"')
    project.write_agent(
        project.script({"delay": TURN_DELAY_S, "text": "Answer."}),
        hooks={"preGeneration": [{"command": record}]},
    )

    async with start_peer() as peer:
        alpha, beta = await peer.new_session(), await peer.new_session()
        started = time.monotonic()
        responses = await asyncio.gather(peer.prompt(alpha, "alpha"), peer.prompt(beta, "beta"))
        took = time.monotonic() - started

    assert [r.stop_reason for r in responses] == ["end_turn", "end_turn"]
    assert took < OVERLAPPED_S  # the two turns overlapped
    assert alpha != beta
    assert (peer.client.text(alpha), peer.client.text(beta)) == ("Answer.", "Answer.")
    seen = {(entry["session_id"], entry["prompt"]) for entry in read_log(log)}
    assert seen == {(alpha, "alpha"), (beta, "beta")}
    histories = {path.stem: project.messages(path) for path in project.session_files()}
    assert [m["content"] for m in histories[alpha] if m["role"] == "user"] == ["alpha"]
    assert [m["content"] for m in histories[beta] if m["role"] == "user"] == ["beta"]


async def test_editor_mcp_servers_pass_the_hooks_and_notices_reach_the_editor(
    project: Project, start_peer: StartPeer, tmp_path: Path, stderr_file: Path
) -> None:
    server_log = tmp_path / "server.log"
    deny = {"action": "deny", "reason": "no recording"}
    replace = {"result": "replaced by a hook"}
    model = project.script(
        {
            "tool_calls": [
                tool_call("mcp__test__record", text="x"),
                tool_call("mcp__test__echo", text="y"),
            ]
        },
        {"expect": "replaced by a hook", "text": "Done."},
    )
    project.write_agent(
        model,
        permissions={"allow": ["mcp__test__echo"]},
        mcp_servers={"broken": {"command": "no-such-server"}},
        hooks={
            "preToolCall": [
                {"matcher": "^mcp__test__record$", "command": reply_hook(project, "d", deny)}
            ],
            "postToolCall": [
                {"matcher": "^mcp__test__echo$", "command": reply_hook(project, "r", replace)}
            ],
        },
    )
    editor_server = McpServerStdio(
        name="test",
        command=sys.executable,
        args=[str(SERVER_SCRIPT), "stdio"],
        env=[EnvVariable(name="MCP_TEST_LOG", value=str(server_log))],
    )

    async with start_peer() as peer:
        session = await peer.new_session(mcp_servers=[editor_server])
        response = await peer.prompt(session, "record and echo")

    assert response.stop_reason == "end_turn"
    assert not server_log.exists()  # the hook denied `record` before it reached the server
    assert peer.client.permissions == []  # denied by a hook, allowed by a rule: nobody asked
    thoughts = peer.client.text(session, "agent_thought_chunk")
    assert "hookgate: MCP server 'broken' did not start: command not found" in thoughts
    assert "hookgate: the result of mcp__test__echo was replaced by a hook" in thoughts
    assert "MCP server 'broken' did not start" in await anyio.Path(stderr_file).read_text()
    check_golden(
        GOLDEN / "editor_mcp_server.json",
        peer.client.received,
        {0: "initialize", 1: "session/new", 2: "session/prompt"},
        session=session,
    )


async def test_cancel_while_the_editor_is_asked_for_consent_cancels_the_turn(
    project: Project, start_peer: StartPeer, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    write = {"tool_calls": [tool_call("write_file", path="notes.txt", content="x")]}
    project.write_agent(
        project.script(write, {"text": "unused"}),
        hooks={"postGeneration": [project.recorder(log)]},
    )
    client = RecordingClient(answers=["never"])

    async with start_peer(client) as peer:
        session = await peer.new_session()
        prompt = asyncio.ensure_future(peer.prompt(session, "write"))
        await asyncio.wait_for(client.asked.wait(), PROMPT_CANCEL_S * 4)
        await peer.conn.cancel(session_id=session)
        response = await asyncio.wait_for(prompt, PROMPT_CANCEL_S)

    assert response.stop_reason == "cancelled"
    assert not (project.dir / "notes.txt").exists()
    assert [entry["outcome"] for entry in read_log(log)] == ["cancelled"]


async def test_a_session_a_hook_stops_is_an_error_answer(
    project: Project, start_peer: StartPeer
) -> None:
    block = {"action": "block", "reason": "not on Fridays"}
    project.write_agent(
        project.script({"text": "unused"}),
        hooks={"sessionStart": [{"command": reply_hook(project, "stop", block)}]},
    )

    async with start_peer() as peer:
        with pytest.raises(RequestError) as raised:
            await peer.new_session()

    assert "not on Fridays" in str(raised.value.data)


async def test_close_says_so_in_initialize_and_answers_an_empty_result(
    project: Project, start_peer: StartPeer
) -> None:
    project.write_agent(project.script({"text": "unused"}))

    async with start_peer() as peer:
        session = await peer.new_session()
        await peer.conn.close_session(session_id=session)

    answered = {0: "initialize", 1: "session/new", 2: "session/close"}
    check_golden(GOLDEN / "close.json", peer.client.received, answered, session=session)


async def test_close_stops_the_sessions_mcp_servers_and_refuses_its_prompts(
    project: Project,
    start_peer: StartPeer,
    tmp_path: Path,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    pid_alive: Callable[[int], bool],
) -> None:
    """A long-lived editor closes sessions: each gives back its servers and its model."""
    pid_file = tmp_path / "server.pid"
    project.write_agent(
        project.script({"text": "Still here."}),
        mcp_servers={"test": stdio_server(pid_file=pid_file)},
    )

    async with start_peer() as peer:
        closed = await peer.new_session()
        closed_server = read_pid(pid_file)
        pid_file.unlink()
        kept = await peer.new_session()
        kept_server = read_pid(pid_file)
        await peer.conn.close_session(session_id=closed)
        group_gone(closed_server)
        assert pid_alive(kept_server)
        with pytest.raises(RequestError) as refused:
            await peer.prompt(closed, "hello?")
        answer = await peer.prompt(kept, "hello?")

    assert f"no session {closed!r}" in str(refused.value.data)
    assert answer.stop_reason == "end_turn"
    assert peer.client.text(kept) == "Still here."


async def test_close_during_a_turn_cancels_it_after_post_generation_ran(
    project: Project, start_peer: StartPeer, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    started = agent_with_a_long_command(project, log)

    async with start_peer() as peer:
        session, prompt = await prompt_into_the_long_command(peer, started)
        sent = time.monotonic()
        await peer.conn.close_session(session_id=session)
        closed_after = time.monotonic() - sent
        response = await asyncio.wait_for(prompt, PROMPT_CANCEL_S)
        with pytest.raises(RequestError):
            await peer.prompt(session, "are you there?")

    # close answers once the turn is over and postGeneration has run: no later than that
    assert (response.stop_reason, closed_after < PROMPT_CANCEL_S) == ("cancelled", True)
    assert [entry["outcome"] for entry in read_log(log)] == ["cancelled"]


#: Seconds the slow audit hook takes: the repeated cancels and signals land inside it.
SLOW_AUDIT_S = 1.0
#: Seconds between two repeated cancels, as an impatient editor sends them.
REPEAT_S = 0.3


def slow_audit(project: Project, log: Path) -> tuple[dict[str, Any], Path]:
    """A postGeneration hook that marks its start, takes a second, then records its input."""
    begun = project.dir / "audit-started"
    body = f': > "{begun}"; input=$(cat); sleep {SLOW_AUDIT_S}; echo "$input" >> "{log}"'
    return {"name": "audit", "command": project.hook("audit", body)}, begun


async def test_repeated_cancels_let_post_generation_finish_once(
    project: Project, start_peer: StartPeer, tmp_path: Path
) -> None:
    log = tmp_path / "audit.log"
    started = project.dir / "started"
    audit, begun = slow_audit(project, log)
    model = project.script(
        {"tool_calls": [tool_call("shell", command=f"touch {started}; sleep 30")]}
    )
    project.write_agent(model, yolo=True, hooks={"postGeneration": [audit]})

    async with start_peer() as peer:
        session, prompt = await prompt_into_the_long_command(peer, started)
        await peer.conn.cancel(session_id=session)
        await wait_for_file(begun)
        for _ in range(2):
            await peer.conn.cancel(session_id=session)
            await asyncio.sleep(REPEAT_S)
        response = await prompt

    assert response.stop_reason == "cancelled"
    assert [entry["outcome"] for entry in read_log(log)] == ["cancelled"]


async def test_a_malformed_model_chunk_fails_the_turn_not_the_agent(
    project: Project, start_peer: StartPeer, chat_server: ChatServer
) -> None:
    """`delta: null` from the model server: the prompt is a JSON-RPC error saying so, the
    session file holds a model_error event, and the next prompt is answered."""
    chat_server.queue(
        ServedReply(raw_events=[b'data: {"choices": [{"index": 0, "delta": null}]}\n\n']),
        ServedReply(text="Recovered."),
    )
    project.write_agent(served_model(chat_server.url))

    async with start_peer() as peer:
        session = await peer.new_session()
        with pytest.raises(RequestError) as failed:
            await peer.prompt(session, "first")
        after = await peer.prompt(session, "second")

    assert failed.value.code == -32603
    assert "sent a delta that is not a JSON object" in str(failed.value.data)
    assert after.stop_reason == "end_turn"
    assert peer.client.text(session).endswith("Recovered.")
    assert [r["kind"] for r in project.records() if r.get("type") == "event"] == ["model_error"]
