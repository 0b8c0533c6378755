"""The team in each front end, through the real entry points: `-p` prints the
supervisor's answer alone, line mode shows each task's start, end and owner and
Ctrl-C cancels every task, ACP sends the task list as the editor's plan."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from frontends.test_line import PROMPT, Terminal, start, terminals
from handoff.conftest import AgentDir, read_log, wait_for_pid_file
from runtime.project import Project
from support.acp_client import RecordingClient, check_golden, wait_for_file
from team.conftest import WAIT, StartAcp, calls, create, team_entry

__all__ = ["terminals"]  # the fixture

GOLDEN = Path(__file__).parents[1] / "acp" / "golden"
#: Seconds from Ctrl-C to the prompt: each member gets its stop and its
#: postGeneration hooks, then the supervisor's run.
CANCEL_BOUND_S = 15.0


def two_tasks(
    supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir, **options: object
) -> None:
    supervisor.write(
        calls(create("review the diff", "reviewer"), create("run the tests", "tester"), WAIT),
        {"expect": "tested: green", "text": "Reviewed and tested."},
        yolo=True,
        team=team_entry(reviewer, tester, **options),
    )
    reviewer.write({"text": "reviewed: fine"})
    tester.write({"text": "tested: green"})


def test_print_mode_prints_the_supervisors_answer_alone(
    project: Project, supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir
) -> None:
    two_tasks(supervisor, reviewer, tester)

    done = project.hookgate("-p", "Review and test the release.")

    assert (done.returncode, done.stdout) == (0, "Reviewed and tested.\n"), done.stderr
    for line in ("task 1 started: review the diff (reviewer)", "task 1 done (reviewer)",
                 "task 2 started: run the tests (tester)", "task 2 done (tester)"):  # fmt: skip
        assert f"hookgate: {line}\n" in done.stderr


def test_ctrl_c_mid_team_cancels_every_task_and_runs_every_end_of_turn_hook(
    project: Project, supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir,
    terminals: list[Terminal], tmp_path: Path, group_gone: Callable[[int], None],
) -> None:  # fmt: skip
    ends = {name: tmp_path / f"{name}-end.log" for name in ("supervisor", "reviewer", "tester")}
    pids = {name: tmp_path / f"{name}.pid" for name in ("reviewer", "tester")}
    supervisor.write(
        calls(create("review the diff", "reviewer"), create("run the tests", "tester"), WAIT),
        yolo=True,
        team=team_entry(reviewer, tester),
        hooks={"postGeneration": [supervisor.recorder("end", ends["supervisor"])]},
    )
    for member in (reviewer, tester):
        name = member.dir.name
        # The pid is written once the member's turn has begun: a signal before that
        # (its start-up) ends it with no turn, and so with no end of a turn to hook.
        member.write(
            {"delay": 60, "text": "too late"},
            hooks={
                "preGeneration": [member.hook("pid", f'echo "$PPID" > "{pids[name]}"')],
                "postGeneration": [member.recorder("end", ends[name])],
            },
        )
    terminal = start(terminals, project)

    terminal.submit("Review and test the release.")
    terminal.expect("task 1 started: review the diff (reviewer)")
    children = [wait_for_pid_file(path) for path in pids.values()]
    terminal.type("\x03")
    terminal.expect("task 1 cancelled (reviewer)", timeout=CANCEL_BOUND_S)
    terminal.expect("turn cancelled", timeout=CANCEL_BOUND_S)
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    for child in children:
        group_gone(child)
    for name, log in ends.items():
        assert [entry["outcome"] for entry in read_log(log)] == ["cancelled"], name
    assert "task 2 cancelled (tester)" in terminal.screen


@pytest.mark.anyio
async def test_acp_sends_the_task_list_as_the_plan(
    project: Project, supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir,
    start_acp: StartAcp,
) -> None:  # fmt: skip
    two_tasks(supervisor, reviewer, tester, max_parallel=1)  # one at a time: a stable golden
    client = RecordingClient()

    async with start_acp(client) as peer:
        session = await peer.new_session()
        response = await peer.prompt(session, "Review and test the release.")

    assert response.stop_reason == "end_turn"
    plans = [u for u in client.updates[session] if u.session_update == "plan"]
    assert [(e.content, e.status) for e in plans[-1].entries] == [
        ("review the diff — reviewer", "completed"),
        ("run the tests — tester", "completed"),
    ]
    check_golden(
        GOLDEN / "team_plan.json",
        client.received,
        {0: "initialize", 1: "session/new", 2: "session/prompt"},
        session=session,
    )


@pytest.mark.anyio
async def test_acp_cancel_mid_team_sends_a_plan_with_every_task_cancelled(
    project: Project, supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir,
    start_acp: StartAcp, tmp_path: Path,
) -> None:  # fmt: skip
    """`session/cancel` while the members work: a last plan follows, every task in it
    ended (cancelled), where the editor showed them in progress for good."""
    pid = tmp_path / "reviewer.pid"
    supervisor.write(
        calls(create("review the diff", "reviewer"), create("run the tests", "tester"), WAIT),
        yolo=True,
        team=team_entry(reviewer, tester, max_parallel=1),  # the second task waits: pending
    )
    reviewer.write(
        {"delay": 60, "text": "too late"},
        hooks={"sessionStart": [reviewer.hook("pid", f'echo "$PPID" > "{pid}"')]},
    )
    tester.write({"delay": 60, "text": "too late"})
    client = RecordingClient()

    async with start_acp(client) as peer:
        session = await peer.new_session()
        async with anyio.create_task_group() as group:

            async def prompt() -> None:
                response = await peer.prompt(session, "Review and test the release.")
                assert response.stop_reason == "cancelled"

            group.start_soon(prompt)
            await wait_for_file(pid)
            await peer.conn.cancel(session_id=session)

    plans = [u for u in client.updates[session] if u.session_update == "plan"]
    assert ("review the diff — reviewer", "in_progress") in [
        (e.content, e.status) for plan in plans for e in plan.entries
    ]
    assert [(e.content, e.status) for e in plans[-1].entries] == [
        ("review the diff — reviewer (cancelled)", "completed"),
        ("run the tests — tester (cancelled)", "completed"),
    ]
