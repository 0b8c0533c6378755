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
from hookgate.hooks.schema import schema_for
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
        assert payload["asked"] == {"depth": 1}
        assert payload["agent"] == "deeper"
    assert payloads[-1]["answer"] == "From two levels down."
