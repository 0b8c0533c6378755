"""Approve once in line mode, on a real pty: a guardrail's block gets an id, `/approve
ID` lets exactly the next identical call past that guardrail, and only it."""

from __future__ import annotations

import json
import re

from frontends.test_line import PROMPT, Terminal, start, terminals
from runtime.project import Project, read_log

__all__ = ["terminals"]  # the pty fixture, shared with test_line

CALL = {"name": "shell", "arguments": {"command": "touch once.txt"}}


def test_approve_once_lets_exactly_one_identical_call_through(
    project: Project, terminals: list[Terminal]
) -> None:
    model = project.script(
        {"tool_calls": [CALL]}, {"expect": "denied by guardrail", "text": "It was blocked."},
        {"tool_calls": [CALL]}, {"text": "Done."},
        {"tool_calls": [CALL]}, {"expect": "denied by guardrail", "text": "Blocked again."},
    )  # fmt: skip
    (project.dir / "verdicts.yaml").write_text(
        json.dumps([{"decision": "block", "reason": "it touches a file"}])
    )
    log = project.dir / "own.log"
    project.write_agent(
        model,
        yolo=True,
        hooks={"preToolCall": [project.recorder(log)]},
        guardrails={"model": "scripted:verdicts.yaml"},
    )
    terminal = start(terminals, project)
    terminal.submit("/hooks")
    terminal.expect("preToolCall 4. guardrail shell matcher '^shell$' (onError fail)")
    terminal.expect(PROMPT)

    terminal.submit("make the file")
    shown = terminal.expect("It was blocked.")
    match = re.search(r"/approve ([0-9a-f]{16}) lets this exact call through once", shown)
    assert match is not None, shown
    assert "guardrail 'shell' blocked the shell call: it touches a file" in shown
    terminal.expect(PROMPT)
    terminal.submit("/approve nope")
    terminal.expect(f"no guardrail block 'nope' to approve (blocks now: {match[1]})")
    terminal.submit(f"/approve {match[1]}")
    terminal.expect("approved once")
    terminal.expect(PROMPT)

    terminal.submit("try again")
    terminal.expect("Done.")
    terminal.expect(PROMPT)
    assert (project.dir / "once.txt").exists()
    (project.dir / "once.txt").unlink()

    terminal.submit("and once more")
    again = terminal.expect("Blocked again.")
    terminal.expect(PROMPT)
    terminal.type("\x04")
    assert terminal.wait() == 0

    assert "/approve" in again  # checked again, blocked again
    assert not (project.dir / "once.txt").exists()
    assert len(read_log(log)) == 3  # the file's own hook saw the approved call too
    events = [r for r in project.records() if r.get("type") == "event"]
    approved = [e["data"] for e in events if e["kind"] == "guardrail_approved"]
    assert approved == [{"id": match[1], "tool": "shell", "arguments": CALL["arguments"],
                         "rule": "shell", "reason": "it touches a file", "via": "/approve"}]  # fmt: skip
