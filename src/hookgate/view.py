"""What a turn shows: the interface each front end implements to display a turn.

The turn function reports through a `TurnView` and never prints: the line mode
writes to the terminal, `-p` keeps the answer for stdout and sends notices to
stderr, ACP turns each call into a session update.
"""

from __future__ import annotations

from typing import Protocol

from hookgate.messages import ToolCall
from hookgate.tools import ToolResult


class TurnView(Protocol):
    def answer_text(self, delta: str) -> None:
        """A piece of the model's answer, as it streams."""
        ...

    def notice(self, text: str) -> None:
        """A line for the user from hookgate or a hook: never part of the answer."""
        ...

    def tool_started(self, call: ToolCall) -> None: ...

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None: ...


class QuietView:
    """Shows nothing; collects notices (for tests, and scripts that read them after)."""

    def __init__(self) -> None:
        self.notices: list[str] = []
        self.text: list[str] = []

    def answer_text(self, delta: str) -> None:
        self.text.append(delta)

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def tool_started(self, call: ToolCall) -> None:
        pass

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        pass
