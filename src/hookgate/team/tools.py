"""The supervisor's tools: `create_task`, `list_tasks`, `wait_for_tasks`.

Offered only to the agent whose file declares `team:`. `create_task` acts (its
task becomes a hand-off), so its call needs consent like `ask_agent`; the other two
only read the board or run what was already allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hookgate.errors import ToolError
from hookgate.handoff import Refused
from hookgate.handoff.ask_tool import truncated_answer
from hookgate.messages import ToolSpec
from hookgate.team.board import Task, TaskStatus
from hookgate.team.rounds import Team
from hookgate.tools.base import Tool, ToolContext, ToolResult, check_arguments


class _TeamTool:
    needs_consent = False

    def __init__(self, team: Team, spec: ToolSpec) -> None:
        self.team = team
        self._spec = spec

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    def _arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return check_arguments(self._spec.parameters, arguments)


class CreateTaskTool(_TeamTool):
    needs_consent = True

    def __init__(self, team: Team) -> None:
        members = "\n".join(
            f"- {ref.name}: {ref.description or '(no description)'}"
            for ref in team.config.members.values()
        )
        super().__init__(team, ToolSpec(
            name="create_task",
            description=(
                f"Give a task to a member of the team {team.config.name}. Tasks run when "
                "you call wait_for_tasks, up to "
                f"{team.config.max_parallel} at once; a task without a member goes to the "
                f"next idle one. Each member works on its own and sees only its task. "
                f"Members:\n{members}"
            ),
            parameters={
                "type": "object",
                "properties": {
                    "subject": {"type": "string", "description": "A short title."},
                    "description": {"type": "string", "description": "The task, complete."},
                    "member": {"type": "string", "enum": list(team.config.members)},
                },
                "required": ["subject", "description"],
                "additionalProperties": False,
            },
        ))  # fmt: skip

    async def run(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            args = self._arguments(arguments)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        created = await self.team.create(args["subject"], args["description"], args.get("member"))
        if isinstance(created, Refused):
            text = f"[task refused: {created.reason}]"
            return ToolResult(f"{text}\n{created.response}" if created.response else text, True)
        return ToolResult(f"created {created.summary()}")


class ListTasksTool(_TeamTool):
    def __init__(self, team: Team) -> None:
        super().__init__(team, ToolSpec(
            name="list_tasks",
            description="List the team's tasks: id, status, subject and member.",
            parameters={"type": "object", "properties": {}, "additionalProperties": False},
        ))  # fmt: skip

    async def run(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        tasks = self.team.board.tasks.values()
        return ToolResult("\n".join(task.summary() for task in tasks) or "[no tasks yet]")


class WaitForTasksTool(_TeamTool):
    def __init__(self, team: Team) -> None:
        super().__init__(team, ToolSpec(
            name="wait_for_tasks",
            description=(
                "Run the pending tasks and wait until they are done, then read each "
                "task's result. Name task ids to read those only; by default every task "
                "that has not been reported yet."
            ),
            parameters={
                "type": "object",
                "properties": {"task_ids": {"type": "array", "items": {"type": "string"}}},
                "additionalProperties": False,
            },
        ))  # fmt: skip
        self._reported: set[str] = set()

    async def run(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            args = self._arguments(arguments)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        board = self.team.board.tasks
        ids = args.get("task_ids") or [i for i in board if i not in self._reported]
        unknown = [i for i in ids if i not in board]
        if unknown:
            return ToolResult(f"no task {', '.join(unknown)} (tasks: {', '.join(board)})", True)
        await self.team.run_rounds()
        # Tasks an idle hook added run in the rounds too: report them with the rest.
        ids += [i for i in board if i not in ids and i not in self._reported and board[i].finished]
        self._reported.update(ids)
        return ToolResult(
            "\n\n".join(_report(board[i]) for i in ids) or "[no tasks]",
            is_error=any(board[i].status is TaskStatus.FAILED for i in ids),
        )


def _report(task: Task) -> str:
    head = task.summary()
    if task.error is not None:
        head += f"\nerror: {task.error}"
    return f"{head}\n{truncated_answer(task.answer)}" if task.answer else head


def team_tools(team: Team) -> list[Tool]:
    return [CreateTaskTool(team), ListTasksTool(team), WaitForTasksTool(team)]
