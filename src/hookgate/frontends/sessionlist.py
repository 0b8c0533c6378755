"""`hookgate sessions`: the saved sessions as a table, one row each, oldest first.

A row holds what a user picks a session by (its id for `-r`, when and where it ran,
the agent file, the first question on one line and cut short, the number of turns).
Every cell may quote what the model was sent or a hostile path: it is made visible.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from datetime import datetime

from hookgate.errors import SessionError
from hookgate.frontends.terminal import notice_line
from hookgate.store.session import Session, SessionInfo, SessionStore
from hookgate.view import visible

HEADER = ("ID", "DATE", "DIRECTORY", "AGENT", "FIRST QUESTION", "TURNS")
#: The widest the first question grows before it is cut.
MAX_CELL = 40


def print_sessions(store: SessionStore) -> int:
    """Print the table on stdout; no sessions at all is a notice on stderr."""
    rows = [session_row(info) for info in store.list()]
    if not rows:
        notice_line(f"no saved sessions in {store.directory}")
        return 0
    widths = [max(len(row[i]) for row in (HEADER, *rows)) for i in range(len(HEADER))]
    for row in (HEADER, *rows):
        print(_line(row, widths), file=sys.stdout)
    return 0


def session_row(info: SessionInfo) -> tuple[str, ...]:
    """One session's cells: id, date, directory, agent file, first question, turns."""
    questions: list[str] = []
    with contextlib.suppress(SessionError):  # unreadable now: the header still says a lot
        questions = [m.content for m in Session(info).messages() if m.role == "user"]
    first = " ".join(questions[0].split()) if questions else ""
    return (
        info.id,
        _date(info.created),
        visible(info.cwd),
        visible(info.agent_file),
        _cut(visible(first)),
        str(len(questions)),
    )


def _line(row: Sequence[str], widths: Sequence[int]) -> str:
    cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=False)]
    return "  ".join([*cells, row[-1].rjust(widths[-1])])


def _date(created: str) -> str:
    """`2026-11-30 15:04` in UTC, as recorded; the raw text if it is not a date."""
    try:
        return datetime.fromisoformat(created).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return _cut(visible(created))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"
