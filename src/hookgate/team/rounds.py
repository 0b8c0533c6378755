"""The team at work: tasks run as hand-offs to the members, in rounds, events around them.

    create_task ─▶ taskCreated (a block refuses it) ─▶ pending
    wait_for_tasks ─▶ round: each pending task ─▶ delegate (preAsk … postAsk) ─▶ taskCompleted
                       (a block sends it back)   a member with nothing left ─▶ teammateIdle
                       (a block is its next task) ─▶ the next round, up to max_rounds

Every task is a `delegate` hand-off to a separate `hookgate` process of its member, so
it has that member's own hooks and depth, and the supervisor's preAsk/postAsk and
subagentStart/Stop around it. A round runs inside the waiting tool call, in one task
group: cancelling the turn cancels every running task (each child is stopped and runs
its postGeneration) before the supervisor's own postGeneration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hookgate.config.agentfile import AgentConfig, TeamConfig
from hookgate.handoff import Handoffs, Refused, delegate, handoffs_for
from hookgate.hooks import HookEngine, Outcome
from hookgate.team.board import CANCELLED, Task, TaskBoard, TaskStatus
from hookgate.view import NoticeKind


class TeamDisplay(Protocol):
    """Where the team shows itself: each front end has one."""

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        """A line for the user: a task started or ended, a hook's message."""
        ...

    def tasks_changed(self, tasks: Sequence[Task]) -> None:
        """The task list as it is now (ACP sends it as a plan)."""
        ...


class NoticeTeamDisplay:
    """A team display for front ends that show notices only."""

    def __init__(self, notify: Callable[[str], None]) -> None:
        self._notify = notify

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        self._notify(text)

    def tasks_changed(self, tasks: Sequence[Task]) -> None:
        pass


class MemberDisplay:
    """The hand-offs' display inside a team: members' notices, never their text (two
    answers streamed at once would interleave; the supervisor reads them whole)."""

    shows_answer = False

    def __init__(self, display: TeamDisplay) -> None:
        self._display = display

    def notice(self, text: str) -> None:
        self._display.notice(text)

    def asked_text(self, agent: str, delta: str) -> None:
        pass

    def asked_done(self, agent: str) -> None:
        pass


@dataclass
class Team:
    """The supervisor's team: its board, and the hand-offs that run its tasks."""

    config: TeamConfig
    handoffs: Handoffs
    """The members as agents to hand off to, with the supervisor's engine."""
    display: TeamDisplay
    board: TaskBoard = field(default_factory=TaskBoard)
    _queue: list[Task] = field(default_factory=list)
    _busy: set[str] = field(default_factory=set)
    _worked: set[str] = field(default_factory=set)
    _idle: set[str] = field(default_factory=set)

    async def create(self, subject: str, description: str, member: str | None) -> Task | Refused:
        """A new pending task, unless `member` is unknown or a taskCreated hook refuses it."""
        if member is not None and member not in self.config.members:
            known = ", ".join(self.config.members)
            return Refused(member, f"no member named {member!r} (members: {known})")
        task = self.board.new(subject, description, member)
        created = await self._fire("taskCreated", task.member, task=task.hook_view())
        if created.blocked:
            reason = created.reason or f"blocked by hook {created.blocked_by!r}"
            self.display.notice(f"task {task.id} refused: {reason}", NoticeKind.DENIED)
            return Refused(member or "", reason, created.response)
        self.board.add(task)
        self.display.notice(f"{task.summary()} created")
        self._changed()
        return task

    async def run_rounds(self) -> None:
        """Run the pending tasks, round after round, until none is left or `max_rounds`
        rounds have run; tasks still pending then fail with the reason. Cancelled, every
        task not ended fails as cancelled, and the display is told (ACP's last plan)."""
        try:
            for _ in range(self.config.max_rounds):
                if not self.board.pending():
                    return
                await self._round()
        except asyncio.CancelledError:
            for task in self.board.tasks.values():
                if task.status in (TaskStatus.PENDING, TaskStatus.RUNNING):
                    task.status, task.error = TaskStatus.FAILED, CANCELLED
            self._changed()
            raise
        for task in self.board.pending():
            task.status = TaskStatus.FAILED
            task.error = f"not run: the team ran its {self.config.max_rounds} rounds (max_rounds)"
        self._changed()

    async def _round(self) -> None:
        self._queue = self.board.pending()  # what hooks add meanwhile waits for the next round
        self._worked.clear()
        self._idle.clear()
        async with asyncio.TaskGroup() as group:
            self._start_ready(group)
        # A member whose queued task another one took never saw its own last run end
        # with nothing left: it goes idle with the round.
        for member in self.config.members:
            if member in self._worked and member not in self._idle:
                await self._went_idle(member)

    def _start_ready(self, group: asyncio.TaskGroup) -> None:
        """Start queued tasks while a slot is free: each on its member, or an unassigned
        one on the first idle member."""
        for task in list(self._queue):
            if len(self._busy) >= self.config.max_parallel:
                return
            member = task.member or next(
                (name for name in self.config.members if name not in self._busy), None
            )
            if member is None or member in self._busy:
                continue
            self._queue.remove(task)
            self._busy.add(member)
            task.member, task.status = member, TaskStatus.RUNNING
            group.create_task(self._run(task, member, group))

    async def _run(self, task: Task, member: str, group: asyncio.TaskGroup) -> None:
        self.display.notice(f"task {task.id} started: {task.subject} ({member})")
        self._changed()
        try:
            outcome = await delegate(self.handoffs, member, self._prompt(task))
            if isinstance(outcome, Refused):
                task.answer, task.error = "", f"hand-off refused: {outcome.reason}"
            else:
                task.answer, task.error = outcome.answer, outcome.error
            await self._completed(task, member)
        except asyncio.CancelledError:
            if task.status is TaskStatus.RUNNING:  # not if taskCompleted had decided
                task.status, task.error = TaskStatus.FAILED, CANCELLED
                self.display.notice(f"task {task.id} cancelled ({member})", NoticeKind.ERROR)
            raise
        finally:
            self._busy.discard(member)
        self._worked.add(member)
        self._changed()
        self._start_ready(group)
        if member not in self._busy and not self._has_work(member):
            await self._went_idle(member)

    async def _completed(self, task: Task, member: str) -> None:
        done = await self._fire(
            "taskCompleted", member, task=task.hook_view(), answer=task.answer, error=task.error
        )
        if done.blocked:
            reason = done.reason or f"blocked by hook {done.blocked_by!r}"
            task.feedback.append(reason)
            task.status = TaskStatus.PENDING
            self.display.notice(
                f"task {task.id} sent back to {member}: {reason}", NoticeKind.CHANGED
            )
            return
        task.status = TaskStatus.DONE if task.error is None else TaskStatus.FAILED
        ended = "done" if task.error is None else f"failed: {task.error}"
        kind = NoticeKind.INFO if task.error is None else NoticeKind.ERROR
        self.display.notice(f"task {task.id} {ended} ({member})", kind)

    def _has_work(self, member: str) -> bool:
        return any(task.member in (None, member) for task in self._queue)

    async def _went_idle(self, member: str) -> None:
        self._idle.add(member)
        idle = await self._fire("teammateIdle", member)
        if idle.blocked:
            reason = idle.reason or f"blocked by hook {idle.blocked_by!r}"
            task = self.board.new(f"instruction for {member}", reason, member)
            self.board.add(task)
            self.display.notice(f"{member} was given more to do: {reason}", NoticeKind.CHANGED)
            self._changed()

    async def _fire(self, event: str, member: str | None, **fields: Any) -> Outcome:
        payload = {"team": self.config.name, "agent": member or "", **fields}
        outcome = await self.handoffs.engine.run(event, payload)
        for notice in outcome.notices:
            self.display.notice(notice)
        return outcome

    def _prompt(self, task: Task) -> str:
        """What the member reads: its task, and the feedback of earlier tries."""
        text = f"{task.subject}\n\n{task.description}".strip()
        if task.feedback:
            text += f"\n\nYour previous answer:\n{task.answer}\n\nFeedback on it:\n" + "\n".join(
                f"- {reason}" for reason in task.feedback
            )
        return text

    def _changed(self) -> None:
        self.display.tasks_changed(list(self.board.tasks.values()))


def team_for(
    config: AgentConfig,
    engine: HookEngine,
    display: TeamDisplay,
    *,
    project_dir: Path,
    depth: int,
    inherited_limit: int | None,
    trusted_digests: Mapping[str, str],
    inherited_deny: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Team | None:
    """The team of an agent whose file declares `team:`, or None; `env` as `handoffs_for`."""
    if config.team is None:
        return None
    handoffs = handoffs_for(
        config, engine, MemberDisplay(display), project_dir=project_dir, depth=depth,
        inherited_limit=inherited_limit, trusted_digests=trusted_digests,
        agents=config.team.members, inherited_deny=inherited_deny, env=env,
    )  # fmt: skip
    assert handoffs is not None  # a team has members: the agent file says so
    return Team(config.team, handoffs, display)
