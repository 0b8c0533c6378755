"""A team at work, end to end: the supervisor's scripted model creates tasks and waits,
real `hookgate` children of the members run them, and the team events fire.

Each member answers the same text on every run (a child replays its script from the
start), so what a member was told on a second try is read from its own preGeneration
hook's log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from handoff.conftest import AgentDir, OpenAsker, read_log
from hookgate.hooks.author.schema import schema_for
from hookgate.runtime.turn import Answered, run_turn
from runtime.project import Project, RecordingView
from team.conftest import WAIT, calls, create, team_entry

pytestmark = pytest.mark.anyio

TEAM_EVENTS = ("taskCreated", "taskCompleted", "teammateIdle")
FORMATS = ("native", "mecatl", "claude")


def stamped(agent: AgentDir, name: str, log: Path) -> dict[str, Any]:
    """A hook writing `<time> <payload>` to `log`, one line a run."""
    return agent.hook(name, f'payload=$(cat); echo "$(date +%s.%N) $payload" >> "{log}"')


def stamps(log: Path) -> dict[str, float]:
    """Each agent's time in a stamped log, by the agent the payload names."""
    lines = [line.split(" ", 1) for line in log.read_text().splitlines()]
    return {json.loads(payload)["agent"]: float(when) for when, payload in lines}


def recorders(agent: AgentDir, logs: dict[tuple[str, str], Path]) -> dict[str, list[Any]]:
    """Hooks logging each payload as one line; one write each, as two tasks' hooks run at
    once (the handoff recorder's `cat; echo` could interleave)."""
    return {
        event: [{**agent.hook(f"{event}-{fmt}", f'printf "%s\\n" "$(cat)" >> "{log}"'),
                 "format": fmt}
                for fmt in FORMATS
                for log in [logs[event, fmt]]]
        for event in TEAM_EVENTS
    }  # fmt: skip


async def test_two_tasks_run_at_once_and_each_event_fires_once_per_occurrence_in_every_format(
    supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir, open_asker: OpenAsker,
    tmp_path: Path,
) -> None:  # fmt: skip
    logs = {(e, f): tmp_path / f"{e}.{f}.log" for e in TEAM_EVENTS for f in FORMATS}
    started, stopped = tmp_path / "started.log", tmp_path / "stopped.log"
    supervisor.write(
        calls(create("review the diff", "reviewer"), create("run the tests", "tester"), WAIT),
        {"expect": "tested: green", "text": "Reviewed and tested."},
        yolo=True,
        team=team_entry(reviewer, tester),
        hooks={
            **recorders(supervisor, logs),
            "subagentStart": [stamped(supervisor, "started", started)],
            "subagentStop": [stamped(supervisor, "stopped", stopped)],
        },
    )
    reviewer.write({"delay": 1, "text": "reviewed: fine"})
    tester.write({"delay": 1, "text": "tested: green"})
    agent = await open_asker()

    outcome = await run_turn(agent, "Review and test the release.", RecordingView())

    assert outcome == Answered("Reviewed and tested.")
    begin, end = stamps(started), stamps(stopped)
    assert begin["reviewer"] < end["tester"]
    assert begin["tester"] < end["reviewer"]
    for (event, fmt), log in logs.items():
        payloads = read_log(log)
        assert len(payloads) == 2, (event, fmt)  # two tasks, two members
        for payload in payloads:
            jsonschema.validate(payload, schema_for(event, fmt, "payload"))
    created = read_log(logs["taskCreated", "native"])
    assert [(p["team"], p["agent"], p["task"]) for p in created] == [
        ("release", "reviewer", {"id": "1", "subject": "review the diff",
                                 "description": "review the diff"}),
        ("release", "tester", {"id": "2", "subject": "run the tests",
                               "description": "run the tests"}),
    ]  # fmt: skip
    completed = {p["agent"]: p for p in read_log(logs["taskCompleted", "native"])}
    assert (completed["tester"]["answer"], completed["tester"]["error"]) == ("tested: green", None)
    claude = {p["teammate_name"]: p for p in read_log(logs["taskCompleted", "claude"])}
    assert claude["reviewer"]["task_subject"] == "review the diff"
    assert (claude["reviewer"]["team_name"], claude["reviewer"]["task_id"]) == ("release", "1")
    idle = read_log(logs["teammateIdle", "mecatl"])
    assert sorted(p["Input"]["agent"] for p in idle) == ["reviewer", "tester"]
    assert {p["Phase"] for p in idle} == {"TeammateIdle"}
    (result,) = [m.content for m in agent.history.messages if m.role == "tool"][-1:]
    assert "task 1 [done] review the diff (reviewer)\nreviewed: fine" in result


async def test_blocks_refuse_a_task_send_a_member_back_and_give_an_idle_member_work(
    supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir, open_asker: OpenAsker,
    tmp_path: Path,
) -> None:  # fmt: skip
    seen, once = tmp_path / "reviewer-prompts.log", tmp_path / "once"
    no_deploys = supervisor.hook(
        "no-deploys",
        'case "$(cat)" in *deploy*) echo \'{"action": "block", "reason": "no deploys"}\';; esac',
    )
    send_back = supervisor.hook(  # Claude's way: exit 2, the reason on stderr; once
        "send-back", f'cat >/dev/null; [ -e "{once}.done" ] && exit 0\n'
        f'touch "{once}.done"; echo "add line numbers" >&2; exit 2',
    )  # fmt: skip
    more_work = supervisor.hook(
        "more-work", f'cat >/dev/null; [ -e "{once}.idle" ] && exit 0\n'
        f'touch "{once}.idle"; echo \'{{"action": "block", "reason": "now read CHANGES"}}\'',
    )  # fmt: skip
    supervisor.write(
        calls(create("deploy it", "tester")),
        {"expect": "[task refused: no deploys]", **calls(create("review", "reviewer"), WAIT)},
        {"expect": "instruction for reviewer", "text": "Done."},
        yolo=True,
        team=team_entry(reviewer, tester),
        hooks={
            "taskCreated": [no_deploys],
            "taskCompleted": [{**send_back, "format": "claude"}],
            "teammateIdle": [more_work],
        },
    )
    reviewer.write(
        {"text": "looks fine"}, hooks={"preGeneration": [reviewer.recorder("seen", seen)]}
    )
    tester.write({"text": "unused"})
    agent = await open_asker()

    outcome = await run_turn(agent, "Ship it.", RecordingView())

    assert outcome == Answered("Done.")
    prompts = [p["prompt"] for p in read_log(seen)]
    assert len(prompts) == 3  # the task, the task again with feedback, the idle hook's
    assert prompts[0] == "review\n\nreview"
    assert "Your previous answer:\nlooks fine\n\nFeedback on it:\n- add line numbers" in prompts[1]
    assert prompts[2] == "instruction for reviewer\n\nnow read CHANGES"


async def test_a_mecatl_hook_only_annotates_a_team_event(
    project: Project, supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir,
    open_asker: OpenAsker,
) -> None:  # fmt: skip
    objector = {**supervisor.hook("objector", "echo 'not on Fridays'; exit 2"), "format": "mecatl"}
    supervisor.write(
        calls(create("review", "reviewer"), {"name": "list_tasks", "arguments": {}}),
        {"expect": "task 1 [pending] review (reviewer)", "text": "Queued."},
        yolo=True,
        team=team_entry(reviewer, tester),
        hooks={"taskCreated": [objector]},
    )
    view = RecordingView()
    agent = await open_asker()

    assert await run_turn(agent, "Queue a review.", view) == Answered("Queued.")
    tool_results = [m.content for m in agent.history.messages if m.role == "tool"]
    assert tool_results[0] == "created task 1 [pending] review (reviewer)"


async def test_unassigned_tasks_go_to_the_next_idle_member(
    supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir, open_asker: OpenAsker
) -> None:
    supervisor.write(
        calls(create("first"), create("second"), WAIT),
        {"expect": "task 2 [done] second (tester)", "text": "Both taken."},
        yolo=True,
        team=team_entry(reviewer, tester),
    )
    reviewer.write({"text": "reviewer did it"})
    tester.write({"text": "tester did it"})
    agent = await open_asker()

    assert await run_turn(agent, "Two jobs.", RecordingView()) == Answered("Both taken.")
    waited = [m.content for m in agent.history.messages if m.role == "tool"][-1]
    assert "task 1 [done] first (reviewer)\nreviewer did it" in waited


async def test_a_member_sent_back_every_time_stops_at_max_rounds(
    supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir, open_asker: OpenAsker,
    tmp_path: Path,
) -> None:  # fmt: skip
    runs = tmp_path / "runs.log"
    never_enough = supervisor.hook(
        "never-enough", "cat >/dev/null; echo 'not good enough' >&2; exit 2"
    )
    supervisor.write(
        calls(create("polish", "reviewer"), WAIT),
        {"expect": "not run: the team ran its 2 rounds (max_rounds)", "text": "Gave up."},
        yolo=True,
        team=team_entry(reviewer, tester, max_rounds=2),
        hooks={"taskCompleted": [never_enough]},
    )
    reviewer.write({"text": "polished"}, hooks={"preGeneration": [reviewer.recorder("runs", runs)]})
    tester.write({"text": "unused"})
    agent = await open_asker()

    assert await run_turn(agent, "Polish it.", RecordingView()) == Answered("Gave up.")
    assert len(read_log(runs)) == 2  # one run a round, then the bound
