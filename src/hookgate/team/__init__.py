"""Agent teams: a supervisor (the agent whose file says `team:`) creates tasks that
its members run in parallel, each a hand-off to a separate `hookgate` process.

`board` holds the tasks, `rounds` runs them (taskCreated, taskCompleted and
teammateIdle fire there), `tools` are what the supervisor's model calls. See
docs/teams.md.
"""

from typing import TYPE_CHECKING, Any

from hookgate.team.board import Task, TaskBoard, TaskStatus

if TYPE_CHECKING:
    from hookgate.team.rounds import NoticeTeamDisplay, Team, TeamDisplay, team_for
    from hookgate.team.tools import team_tools


def __getattr__(name: str) -> Any:
    # A front end shows a board's tasks; running them (hand-offs) is imported by a team.
    if name in ("NoticeTeamDisplay", "Team", "TeamDisplay", "team_for"):
        from hookgate.team import rounds

        return getattr(rounds, name)
    if name == "team_tools":
        from hookgate.team.tools import team_tools

        return team_tools
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "NoticeTeamDisplay",
    "Task",
    "TaskBoard",
    "TaskStatus",
    "Team",
    "TeamDisplay",
    "team_for",
    "team_tools",
]
