"""What a resumed session reads of its file: the records its context needs, no more.

A compaction record stands for everything before it but the `kept` messages it left as
they were, so a resume parses from the last such record back to where those messages
begin, and on to the end; the lines before are never parsed (read from the end, in the
file's bytes, by the prefix `Session` writes). The transcript needs only how many
messages the file holds and the last one, unless it must be written afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from hookgate.hooks.records import NamedTuple
from hookgate.messages import Message
from hookgate.runtime.compaction import COMPACTED
from hookgate.runtime.history import answer_every_call
from hookgate.store.session import Session, SessionEvent, parse_record
from hookgate.store.transcript import Recorded

#: How `Session` begins each kind of line (compact JSON, `type` first): lines are told
#: apart without parsing them. A line that begins otherwise is parsed to find out.
_MESSAGE = b'{"type":"message",'
_EVENT = b'{"type":"event",'
_COMPACTION = b'{"type":"event","kind":"' + COMPACTED.encode() + b'",'


class Resumed(NamedTuple):
    """What a resume read of a session file (nothing, for no file)."""

    entries: list[Message | SessionEvent]
    """The records from the first the context needs to the end: `replay` of them is
    `replay` of the whole file (but for stray results left out before them)."""
    whole: bool
    """Whether `entries` are every record of the file."""
    message_count: int
    """Message records in the whole file (counted, not parsed)."""
    last: Message | None
    """The file's last message."""
    session: Session | None

    @property
    def recorded(self) -> Recorded:
        """What the transcript needs: all messages are parsed only where it must be
        written afresh, and then from `entries` where they are the whole file."""
        if self.whole or self.session is None:
            entries = self.entries
            return Recorded(self.message_count, self.last, lambda: _messages(entries))
        return Recorded(self.message_count, self.last, self.session.messages)


def read_for_resume(session: Session | None) -> Resumed:
    """The part of `session`'s file a resume needs (`Resumed`), read once, from the end."""
    if session is None:
        return Resumed([], True, 0, None, None)
    data = session.read()
    body = data.find(b"\n") + 1 if b"\n" in data else len(data)
    start = _context_start(session, data, body)
    entries = session.entries_from(data, start)
    messages = _messages(entries)
    last = messages[-1] if messages else None
    if last is None and start > body:  # nothing kept after the last compaction
        last = _last_message(session, data, start, body)
    return Resumed(entries, start == body, data.count(b"\n" + _MESSAGE), last, session)


def _messages(entries: list[Message | SessionEvent]) -> list[Message]:
    return [entry for entry in entries if isinstance(entry, Message)]


def _context_start(session: Session, data: bytes, body: int) -> int:
    """Where the lines the context needs begin: `body` (the first after the header)
    where no compaction stands for what came before."""
    end = len(data)
    while (compaction := data.rfind(b"\n" + _COMPACTION, body - 1, end) + 1) > 0:
        stop = data.find(b"\n", compaction)
        kept = _kept(data[compaction : len(data) if stop < 0 else stop])
        if kept is None:  # a compaction `replay` ignores: look further back
            end = compaction
            continue
        if kept == 0:
            return compaction  # it stands for everything before it
        window: list[Message] = []  # the messages before it, last first
        for offset, line in _lines_back(data, compaction, body):
            if _kept(line) is not None:
                end = offset + len(line) + 1  # what that one needs, and all after it
                break
            if (record := _message_record(line)) is not None:
                window.append(session.message_from(record, _line_number(data, offset)))
                if _covers(window, kept):
                    return offset
        else:
            return body
    return body


def _covers(window: list[Message], kept: int) -> bool:
    """Whether `window` (last first) begins where the replay of the whole file would
    be in the same state (not at a tool result, which answers a call before it) and
    holds the `kept` messages the compaction left, once repaired as the replay does."""
    if window[-1].role == "tool" or len(window) < kept:
        return False
    return len(answer_every_call(window[::-1])[0]) >= kept


def _message_record(line: bytes) -> dict[str, Any] | None:
    """The message record `line` holds, if any; an event's line is not parsed."""
    if line.startswith(_EVENT):
        return None
    record = parse_record(line)
    return record if record is not None and record.get("type") == "message" else None


def _kept(line: bytes) -> int | None:
    """The messages kept by the compaction record `line` holds, None where it holds
    none that `replay` applies; only a compaction's line (or an odd one) is parsed."""
    if line.startswith((_MESSAGE, _EVENT)) and not line.startswith(_COMPACTION):
        return None
    record = parse_record(line)
    if record is None or record.get("type") != "event" or record.get("kind") != COMPACTED:
        return None
    data = record.get("data")
    if not isinstance(data, dict):
        return None
    summary, kept = data.get("summary"), data.get("kept")
    if not isinstance(summary, str) or not isinstance(kept, int) or kept < 0:
        return None
    return kept


def _last_message(session: Session, data: bytes, end: int, body: int) -> Message | None:
    """The last message record before offset `end`."""
    for offset, line in _lines_back(data, end, body):
        if (record := _message_record(line)) is not None:
            return session.message_from(record, _line_number(data, offset))
    return None


def _line_number(data: bytes, offset: int) -> Callable[[], int]:
    """The number of the line that begins at `offset`, counted when asked (an error)."""
    return lambda: data.count(b"\n", 0, offset) + 1


def _lines_back(data: bytes, end: int, body: int) -> Iterator[tuple[int, bytes]]:
    """(offset, line) of each line that begins at or after `body` and ends by `end`,
    last first; `end` is the file's end or just past a newline."""
    while end > body:
        stop = end - 1 if data[end - 1] == ord("\n") else end
        start = max(data.rfind(b"\n", 0, stop) + 1, body)
        yield start, data[start:stop]
        end = start
