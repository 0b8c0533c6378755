"""A SubagentStop hook that says `decision: block` sends the asked agent on.

Through the real hand-off: the asked agent is a child `hookgate` process whose model
is a loopback chat server (its replies outlast one process), and the asking agent's
Claude Code hook decides on each SubagentStop, as under Claude Code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from handoff.conftest import AgentDir, Display, OpenAsker, agents_entry, read_log
from hookgate.handoff import Returned, delegate
from hookgate.hooks import MAX_CONTINUES
from runtime.project import Project, chat_messages, served_model
from support.chat_server import ChatServer, ServedReply

pytestmark = pytest.mark.anyio

#: A Claude Code SubagentStop hook: it logs its input and sends the agent on once.
CHECK_FIRST = """\
import json, sys
event = json.load(sys.stdin)
with open({log!r}, "a") as log:
    log.write(json.dumps(event) + "\\n")
if not event["stop_hook_active"]:
    print(json.dumps({{"decision": "block", "reason": "Check the plan against the tests."}}))
"""


def subagent_stop_hook(tmp_path: Path, body: str) -> dict[str, object]:
    script = tmp_path / "subagent_stop.py"
    script.write_text(body)
    return {"format": "claude", "args": ["python3", str(script)]}


async def test_a_subagent_stop_block_sends_the_asked_agent_on_with_its_conversation(
    project: Project,
    asker: AgentDir,
    asked: AgentDir,
    open_asker: OpenAsker,
    chat_server: ChatServer,
    tmp_path: Path,
) -> None:
    log = tmp_path / "subagent-stops.log"
    chat_server.queue(ServedReply(text="Plan A."), ServedReply(text="Plan A, checked."))
    asked.write(model=served_model(chat_server.url))
    hook = subagent_stop_hook(tmp_path, CHECK_FIRST.format(log=str(log)))
    asker.write({"text": "unused"}, agents=agents_entry(asked),
                hooks={"SubagentStop": [hook]})  # fmt: skip
    display = Display()
    agent = await open_asker(display)
    assert agent.handoffs is not None

    outcome = await delegate(agent.handoffs, "helper", "What is the plan?")

    assert isinstance(outcome, Returned)
    assert (outcome.answer, outcome.error) == ("Plan A, checked.", None)
    stops = read_log(log)
    assert [stop["stop_hook_active"] for stop in stops] == [False, True]
    assert [stop["last_assistant_message"] for stop in stops] == ["Plan A.", "Plan A, checked."]
    assert {(stop["agent_id"], stop["agent_type"]) for stop in stops} == {("helper", "helper")}
    # The same conversation goes on: the reason is its next question, after its answer.
    second = chat_messages(chat_server.requests[1].body)
    assert [(m["role"], m["content"]) for m in second[-3:]] == [
        ("user", "What is the plan?"),
        ("assistant", "Plan A."),
        ("user", "Check the plan against the tests."),
    ]
    assert "a hook sent helper on: Check the plan against the tests." in display.notices


async def test_a_subagent_stop_hook_sends_the_asked_agent_on_at_most_eight_times(
    project: Project, asker: AgentDir, asked: AgentDir, open_asker: OpenAsker, tmp_path: Path
) -> None:
    log = tmp_path / "subagent-stops.log"
    asked.write({"text": "Not yet."})  # a scripted model: each run answers the same
    nag = {"format": "claude", "command": f'cat >> "{log}"; echo >> "{log}"; echo '
           + "'" + json.dumps({"decision": "block", "reason": "more"}) + "'"}  # fmt: skip
    asker.write({"text": "unused"}, agents=agents_entry(asked), hooks={"SubagentStop": [nag]})
    agent = await open_asker(Display())
    assert agent.handoffs is not None

    outcome = await delegate(agent.handoffs, "helper", "go")

    assert isinstance(outcome, Returned)
    assert (outcome.answer, outcome.error) == ("Not yet.", None)
    stops = read_log(log)
    assert [stop["stop_hook_active"] for stop in stops] == [False] + [True] * MAX_CONTINUES
