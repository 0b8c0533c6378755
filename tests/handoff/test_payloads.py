"""What the hand-off hooks read, checked against the JSON Schemas hookgate ships.

One real hand-off from an asked agent (depth 1) to its own asked agent (depth 2):
the middle agent's preAsk, postAsk, subagentStart and subagentStop payloads must
each be valid for their event, and carry the depth of the agent that runs them.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from handoff.conftest import AgentDir, Display, OpenAsker, agents_entry, read_log
from hookgate.handoff import Returned, delegate
from hookgate.hooks.author.schema import schema_for
from runtime.project import Project

pytestmark = pytest.mark.anyio

HANDOFF_EVENTS = ("preAsk", "subagentStart", "subagentStop", "postAsk")


async def test_every_hand_off_payload_matches_its_schema_and_carries_the_depth(
    project: Project, asker: AgentDir, asked: AgentDir, open_asker: OpenAsker, tmp_path: Path
) -> None:
    log = tmp_path / "events.log"
    deepest = AgentDir(tmp_path / "deepest")
    deepest.write({"text": "From two levels down."})
    asker.write({"text": "unused"}, agents=agents_entry(asked))
    asked.write(
        {"tool_calls": [{"name": "ask_agent", "arguments": {"agent": "deeper", "question": "?"}}]},
        {"expect": "From two levels down.", "text": "Relayed."},
        yolo=True,
        agents={"deeper": {"file": str(deepest.file)}},
        hooks={event: [asked.recorder(event, log)] for event in HANDOFF_EVENTS},
    )
    agent = await open_asker(Display())
    assert agent.handoffs is not None

    outcome = await delegate(agent.handoffs, "helper", "Relay this.")

    assert isinstance(outcome, Returned)
    assert (outcome.answer, outcome.error) == ("Relayed.", None)
    payloads = read_log(log)
    assert [payload["event"] for payload in payloads] == list(HANDOFF_EVENTS)
    for payload in payloads:
        jsonschema.validate(payload, schema_for(payload["event"], "native", "payload"))
        assert payload["asked"] == {"depth": 1, "agent": "helper"}
        assert payload["agent"] == "deeper"
    assert payloads[-1]["answer"] == "From two levels down."


async def test_claude_hooks_of_an_asked_agent_read_its_name_and_the_top_level_ones_do_not(
    project: Project, asker: AgentDir, asked: AgentDir, open_asker: OpenAsker, tmp_path: Path
) -> None:
    """`agent_id`/`agent_type` in every claude-format event of the asked agent (a real
    child process), as inside Claude Code's subagent; none at the top level."""
    log = tmp_path / "events.log"
    (asked.dir / "notes.txt").parent.mkdir(parents=True, exist_ok=True)
    (asked.dir / "notes.txt").write_text("the plan")
    claude_events = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
    asked.write(
        {
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": str(asked.dir / "notes.txt")}}
            ]
        },
        {"text": "The plan."},
        yolo=True,
        hooks={e: [{**asked.recorder(e, log), "format": "claude"}] for e in claude_events},
    )
    top = {"format": "claude", "command": f'{{ cat; echo; }} >> "{log}"'}
    asker.write({"text": "unused"}, agents=agents_entry(asked),
                hooks={"SubagentStart": [top], "SubagentStop": [top]})  # fmt: skip
    agent = await open_asker(Display())
    assert agent.handoffs is not None

    outcome = await delegate(agent.handoffs, "helper", "What is the plan?")

    assert isinstance(outcome, Returned)
    assert outcome.error is None
    payloads = read_log(log)
    names = [payload["hook_event_name"] for payload in payloads]
    assert names == ["SubagentStart", *claude_events, "SubagentStop"]
    for payload in payloads:
        jsonschema.validate(payload, schema_for(payload["hook_event_name"], "claude", "payload"))
        assert (payload["agent_id"], payload["agent_type"]) == ("helper", "helper")
    inside = payloads[1:-1]
    assert {payload["permission_mode"] for payload in inside} == {"bypassPermissions"}
    assert {payload["permission_mode"] for payload in (payloads[0], payloads[-1])} == {"dontAsk"}
