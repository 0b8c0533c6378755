"""Agent teams: a supervisor (the agent whose file says `team:`) creates tasks that
its members run in parallel, each a hand-off to a separate `hookgate` process.

`board` holds the tasks, `rounds` runs them (taskCreated, taskCompleted and
teammateIdle fire there), `tools` are what the supervisor's model calls. See
docs/teams.md.
"""

from hookgate.team.board import Task, TaskBoard, TaskStatus
from hookgate.team.rounds import NoticeTeamDisplay, Team, TeamDisplay, team_for
from hookgate.team.tools import team_tools

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
