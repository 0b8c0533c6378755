"""Hand-offs end to end: the asking agent's model calls `ask_agent`, a real child answers.

Each side has its own scripted model and its own hooks. A scripted model's `expect`
fails its call when the text it was to read is not there, so "the child received the
rewrite" and "the asking model read the replacement" are checked by the models
themselves, and again from the hooks' logs and the history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from handoff.conftest import AgentDir, Display, OpenAsker, agents_entry, read_log
from hookgate.handoff import Refused, Returned, delegate
from hookgate.runtime.turn import Answered, run_turn
from runtime.project import Project, RecordingView

pytestmark = pytest.mark.anyio

SECRET = "sk-live-0123456789"


def ask_call(question: str, *, with_context: bool = False) -> dict[str, Any]:
    arguments = {"agent": "helper", "question": question, "with_context": with_context}
    return {"tool_calls": [{"name": "ask_agent", "arguments": arguments}]}


def tool_messages(agent: Any) -> list[str]:
    return [m.content for m in agent.history.messages if m.role == "tool"]


async def test_prompt_rewrite_reaches_the_child_and_the_replaced_answer_reaches_the_model(
    project: Project, asker: AgentDir, asked: AgentDir, open_asker: OpenAsker, tmp_path: Path
) -> None:
    logs = {name: tmp_path / f"{name}.log" for name in ("pre", "post", "start", "stop", "child")}
    depth_file = tmp_path / "child-depth"
    rewrite = {
        "question": "What is the plan?",
        "conversation": [{"role": "user", "content": "(conversation scrubbed)"}],
    }
    replace = {"answer": "REPLACED ANSWER", "context": "checked by postAsk"}
    asker.write(
        ask_call(f"What is the plan? My key is {SECRET}", with_context=True),
        {"expect": "REPLACED ANSWER", "text": "The helper has a plan."},
        yolo=True,
        agents=agents_entry(asked),
        hooks={
            "preAsk": [asker.recorder("rewrite", logs["pre"], rewrite)],
            "postAsk": [asker.recorder("replace", logs["post"], replace)],
            "subagentStart": [{**asker.recorder("start", logs["start"]), "matcher": "^helper$"}],
            "subagentStop": [{**asker.recorder("stop", logs["stop"]), "matcher": "^helper$"}],
        },
    )
    asked.write(
        {"expect": "What is the plan?", "text": "The original answer, streamed."},
        hooks={
            "preGeneration": [
                asked.hook(
                    "own-hook",
                    f'{{ cat; echo; }} >> "{logs["child"]}"\n'
                    f'echo "$HOOKGATE_ASKED_DEPTH" > "{depth_file}"',
                )
            ]
        },
    )
    display = Display()
    agent = await open_asker(display)

    outcome = await run_turn(agent, f"Ask the helper; my key is {SECRET}", RecordingView())

    assert outcome == Answered("The helper has a plan.")
    (pre,) = read_log(logs["pre"])
    assert pre["question"] == f"What is the plan? My key is {SECRET}"
    assert pre["conversation"][0] == {
        "role": "user",
        "content": f"Ask the helper; my key is {SECRET}",
    }
    (child,) = read_log(logs["child"])
    assert "What is the plan?" in child["prompt"]
    assert "(conversation scrubbed)" in child["prompt"]
    assert SECRET not in child["prompt"]
    assert child["asked"] == {"depth": 1, "agent": "helper"}
    assert depth_file.read_text().strip() == "1"
    (post,) = read_log(logs["post"])
    assert post["question"] == "What is the plan?"
    assert (post["answer"], post["error"]) == ("The original answer, streamed.", None)
    # The user saw the original as it streamed; the model read and the history kept the
    # replacement, and a notice says the two differ.
    assert display.shown == "The original answer, streamed."
    (result,) = tool_messages(agent)
    assert "REPLACED ANSWER" in result
    assert "checked by postAsk" in result
    assert "original" not in result
    assert any("replaced by a hook" in notice for notice in display.notices)
    assert [entry["agent"] for entry in read_log(logs["start"])] == ["helper"]
    assert [(e["agent"], e["error"]) for e in read_log(logs["stop"])] == [("helper", None)]


async def test_a_pre_ask_block_refuses_before_any_child_starts(
    project: Project, asker: AgentDir, asked: AgentDir, open_asker: OpenAsker, tmp_path: Path
) -> None:
    start_log, child_log = tmp_path / "start.log", tmp_path / "child.log"
    block = {"action": "block", "reason": "no keys leave", "message": "Ask without the key."}
    asker.write(
        {"text": "unused"},
        agents=agents_entry(asked),
        hooks={
            "preAsk": [asker.recorder("guard", tmp_path / "pre.log", block)],
            "subagentStart": [asker.recorder("start", start_log)],
        },
    )
    asked.write({"text": "never"}, hooks={"sessionStart": [asked.recorder("own", child_log)]})
    agent = await open_asker(Display())
    assert agent.handoffs is not None

    outcome = await delegate(agent.handoffs, "helper", f"use {SECRET}")

    assert outcome == Refused("helper", "no keys leave", "Ask without the key.")
    assert read_log(start_log) == []
    assert read_log(child_log) == []


async def test_a_pre_ask_hook_cannot_reroute_the_hand_off(
    project: Project, asker: AgentDir, asked: AgentDir, open_asker: OpenAsker, tmp_path: Path
) -> None:
    asker.write(
        {"text": "unused"},
        agents=agents_entry(asked),
        hooks={"preAsk": [asker.recorder("reroute", tmp_path / "pre.log", {"agent": "other"})]},
    )
    asked.write({"text": "The helper answered."})
    display = Display()
    agent = await open_asker(display)
    assert agent.handoffs is not None

    outcome = await delegate(agent.handoffs, "helper", "question")

    assert isinstance(outcome, Returned)
    assert (outcome.agent, outcome.answer, outcome.error) == (
        "helper",
        "The helper answered.",
        None,
    )
    assert any("cannot change which agent is asked" in notice for notice in display.notices)


async def test_the_depth_limit_holds_down_the_chain(
    project: Project, asker: AgentDir, asked: AgentDir, open_asker: OpenAsker, tmp_path: Path
) -> None:
    """The asker allows one level; the child's own file would allow three, and asks itself."""
    child_start_log = tmp_path / "child-start.log"
    asker.write(
        ask_call("Go as deep as you can."),
        {"expect": "could not go deeper", "text": "Stopped at one level."},
        yolo=True,
        max_ask_depth=1,
        agents=agents_entry(asked),
    )
    asked.write(
        {"tool_calls": [{"name": "ask_agent", "arguments": {"agent": "again", "question": "?"}}]},
        {"expect": "the limit is 1 (max_ask_depth)", "text": "I could not go deeper."},
        yolo=True,
        agents={"again": {"file": str(asked.file)}},
        hooks={"subagentStart": [asked.recorder("own-start", child_start_log)]},
    )
    agent = await open_asker(Display())

    outcome = await run_turn(agent, "How deep?", RecordingView())

    assert outcome == Answered("Stopped at one level.")
    assert read_log(child_start_log) == []  # refused before any hook of the child ran
    (result,) = tool_messages(agent)
    assert result == "I could not go deeper."


async def test_the_depth_limit_refuses_with_a_clear_message(
    project: Project, asker: AgentDir, asked: AgentDir, open_asker: OpenAsker, tmp_path: Path
) -> None:
    pre_log = tmp_path / "pre.log"
    asker.write(
        {"text": "unused"},
        agents=agents_entry(asked),
        hooks={"preAsk": [asker.recorder("pre", pre_log)]},
    )
    asked.write({"text": "never"})
    agent = await open_asker(Display(), asked_depth=2, ask_depth_limit=2)
    assert agent.handoffs is not None

    outcome = await delegate(agent.handoffs, "helper", "question")

    assert outcome == Refused(
        "helper",
        "asking 'helper' would run an agent 3 hand-offs deep; the limit is 2 (max_ask_depth)",
    )
    assert read_log(pre_log) == []
