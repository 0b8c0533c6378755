"""Approve once over ACP: a guardrail's block is a `session/request_permission` with
"allow once" and "reject"; allowing lets that call through once, and the next identical
call is judged again. `hookgate acp` runs as a subprocess, driven by the real client."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.project import Project
from support.acp_client import RecordingClient, StartPeer, check_golden
from support.guarded import guarded_twice

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).with_name("golden")


async def test_allow_once_lets_one_identical_call_past_the_guardrail(
    project: Project, start_peer: StartPeer
) -> None:
    guarded_twice(project)
    client = RecordingClient(answers=["allow_once", "reject_once"])

    async with start_peer(client) as peer:
        session = await peer.new_session()
        await peer.prompt(session, "make the file")
        assert (project.dir / "once.txt").exists()
        (project.dir / "once.txt").unlink()
        await peer.prompt(session, "again")

    assert not (project.dir / "once.txt").exists()  # judged again, and rejected
    asked = [(call.title, [o.kind for o in options]) for _, call, options in client.permissions]
    title = 'guardrail \'shell\' blocked: shell {"command": "touch once.txt"}'
    assert asked == [(title, ["allow_once", "reject_once"])] * 2
    (_, first, _) = client.permissions[0]
    assert "it touches a file" in first.content[0].content.text
    thoughts = client.text(session, "agent_thought_chunk")
    assert "passes guardrail 'shell' this once" in thoughts
    assert "guardrail 'shell' blocked the shell call: it touches a file" in thoughts
    requests = [m for m in client.received if m.get("method") == "session/request_permission"]
    check_golden(GOLDEN / "guardrail_permission.json", requests[:1], {}, session=session)
    events = [r["data"] for r in project.records() if r.get("kind") == "guardrail_approved"]
    assert [(e["rule"], e["via"]) for e in events] == [("shell", "permission request")]
