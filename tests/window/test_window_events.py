"""The events the page draws, pinned by a golden file: the page's script reads these
names and fields (`static/app.js`), so a change here is a change of protocol.

UPDATE_GOLDEN=1 rewrites the file; `t` (a clock) and `seq` are left out, and of an
answer's updates only the last is compared.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

from runtime.project import Project
from window.conftest import Window
from window.test_window_guard import ask, client, open_session

GOLDEN = Path(__file__).with_name("golden") / "events.json"
VOLATILE = ("t", "seq")


def test_the_events_of_a_turn_match_the_golden_file(
    project: Project, start_window: Callable[..., Window]
) -> None:
    deny = project.hook("no-rm.sh", """echo '{"action": "deny", "reason": "rm is not allowed"}'""")
    block = project.hook(
        "no-secrets.sh",
        """grep -q password && echo '{"action": "block", "reason": "a password"}' || true""",
    )
    model = project.script(
        {"text": "Let me *try*.", "tool_calls": [
            {"name": "shell", "arguments": {"command": "rm -rf build"}},
            {"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}},
        ]},
        {"text": "Done: `a.txt`."},
    )  # fmt: skip
    project.write_agent(model, hooks={
        "preToolCall": [{"name": "no-rm", "matcher": "^shell$", "command": deny}],
        "preGeneration": [{"name": "no-secrets", "command": block}],
    })  # fmt: skip
    window = start_window()
    session_id = open_session(window)

    with client(window) as http:
        events = turn_events(http, session_id, "clean up")
        events += turn_events(http, session_id, "my password is hunter2", events[-1]["seq"])

    actual = [{k: v for k, v in event.items() if k not in VOLATILE} for event in whole(events)]
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    assert actual == json.loads(GOLDEN.read_text())


def whole(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each answer block's last update only: how many came live depends on timing."""
    last = {event["block"]: event for event in events if event["type"] == "answer"}
    return [e for e in events if e["type"] != "answer" or last[e["block"]] is e]


def turn_events(
    http: httpx2.Client,
    session_id: str,
    question: str,
    after: int = -1,
    answer: str = "allow_once",
) -> list[dict[str, Any]]:
    """Ask, give every consent request `answer`, and collect the turn's events: those
    after number `after` (what an `EventSource` that reconnects asks for)."""
    path = f"/api/sessions/{session_id}"
    headers = {"last-event-id": str(after)} if after >= 0 else {}
    events: list[dict[str, Any]] = []
    with http.stream("GET", f"{path}/events", headers=headers) as stream:
        assert ask(http, session_id, question).status_code == 202  # events now come live
        for line in stream.iter_lines():
            if not line.startswith("data: "):
                continue
            event = json.loads(line.removeprefix("data: "))
            events.append(event)
            if event["type"] == "consent":
                answered = {"id": event["id"], "answer": answer}
                assert http.post(f"{path}/consent", json=answered).status_code == 200
            if event["type"] == "turn_end":
                return events
    raise AssertionError(f"the stream ended before the turn did: {events}")
