"""The team's tasks: what the supervisor created, who took each, and how it ended.

Plain state, no I/O: `rounds` changes it and the tools and front ends read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

#: A task's error once its turn was cancelled before it ended.
CANCELLED = "cancelled"


class TaskStatus(StrEnum):
    PENDING = "pending"
    """Created (or sent back, or given by an idle hook): runs in the next round."""
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    """The member's hand-off failed, was refused or cancelled, or never ran."""


@dataclass
class Task:
    """One task; `member` is None until an unassigned task is taken."""

    id: str
    subject: str
    description: str
    member: str | None = None
    status: TaskStatus = TaskStatus.PENDING
    answer: str = ""
    error: str | None = None
    feedback: list[str] = field(default_factory=list)
    """Why taskCompleted hooks sent the member back, oldest first."""

    @property
    def finished(self) -> bool:
        return self.status in (TaskStatus.DONE, TaskStatus.FAILED)

    def hook_view(self) -> dict[str, Any]:
        """The `task` field of the team events' payloads."""
        return {"id": self.id, "subject": self.subject, "description": self.description}

    def summary(self) -> str:
        """One line for `list_tasks` and the notices."""
        owner = self.member or "unassigned"
        return f"task {self.id} [{self.status.value}] {self.subject} ({owner})"


@dataclass
class TaskBoard:
    """Every task of the session's team, in the order they were created."""

    tasks: dict[str, Task] = field(default_factory=dict)
    _next_id: int = 1

    def new(self, subject: str, description: str, member: str | None) -> Task:
        """A task with the next id (never reused, a refused task's neither); not on
        the board until `add`."""
        task = Task(str(self._next_id), subject, description, member)
        self._next_id += 1
        return task

    def add(self, task: Task) -> None:
        self.tasks[task.id] = task

    def pending(self) -> list[Task]:
        return [task for task in self.tasks.values() if task.status is TaskStatus.PENDING]
