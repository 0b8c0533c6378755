"""What a turn shows: the interface each front end implements to display a turn.

The turn function reports through a `TurnView` and never prints: the line mode
writes to the terminal, `-p` keeps the answer for stdout and sends notices to
stderr, ACP turns each call into a session update. `visible` is how any of them
shows text it did not write: no control character reaches a terminal as such.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Protocol, runtime_checkable

from hookgate.hooks.records import NamedTuple
from hookgate.messages import ToolCall
from hookgate.tools import ToolResult


class NoticeKind(StrEnum):
    """What a notice reports, so that each front end can show it in its own style."""

    INFO = "info"
    """A hook's message, or a note from hookgate about the session."""
    CHANGED = "changed"
    """A hook rewrote or replaced something: the turn went on, differently."""
    DENIED = "denied"
    """A tool call did not run: a hook, a rule or the want of consent stopped it."""
    BLOCKED = "blocked"
    """The question never reached the model."""
    ERROR = "error"
    """Something failed: the model server, a hook that had to run, the step limit."""


class TurnView(Protocol):
    def answer_text(self, delta: str) -> None:
        """A piece of the model's answer, as it streams."""
        ...

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        """A line for the user from hookgate or a hook: never part of the answer."""
        ...

    def tool_started(self, call: ToolCall) -> None: ...

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None: ...


class MarkKind(StrEnum):
    """What happened to a tool call on its way: shown on the call's row by the window."""

    DENIED = "denied"
    """It did not run: a hook, a permission rule or the user said no."""
    REWRITTEN = "rewritten"
    """A hook replaced its arguments: it ran with the hook's."""
    REPLACED = "replaced"
    """A hook replaced its result: the model read the hook's."""


class ToolMark(NamedTuple):
    kind: MarkKind
    by: str
    """The hook's name, `permission rule` or `user`."""
    reason: str


@runtime_checkable
class MarksToolCalls(Protocol):
    """A view that also wants each tool call's marks (optional: notices say the same)."""

    def tool_marked(self, call: ToolCall, mark: ToolMark) -> None:
        """Called between `tool_started` and `tool_finished` of `call`."""
        ...


@runtime_checkable
class HidesBlockedQuestions(Protocol):
    """A view that keeps what was asked to show again later (the window's event log,
    which a page loading at any time replays): told as soon as a hook blocked the
    question, before the end-of-turn hooks run, so that it shows the marker from then
    on and never the question (optional: the history keeps the marker either way)."""

    def question_blocked(self, marker: str) -> None: ...


class QuietView:
    """Shows nothing; collects notices (for tests, and scripts that read them after)."""

    def __init__(self) -> None:
        self.notices: list[str] = []
        self.kinds: list[NoticeKind] = []
        self.text: list[str] = []

    def answer_text(self, delta: str) -> None:
        self.text.append(delta)

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        self.notices.append(text)
        self.kinds.append(kind)

    def tool_started(self, call: ToolCall) -> None:
        pass

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        pass


#: C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides
#: that make text read differently from what it is ("Trojan Source").
_CONTROLS = re.compile(r"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _shown(control: re.Match[str]) -> str:
    char = control.group()
    if char == "\r\n":
        return "\n"
    if char < " ":
        return chr(0x2400 + ord(char))  # the Control Pictures block: ESC is ␛, CR is ␍
    return "␡" if char == "\x7f" else f"<U+{ord(char):04X}>"


def visible(text: str) -> str:
    """`text` with every control character shown as a harmless sign, tab and newline kept."""
    return _CONTROLS.sub(_shown, text)
