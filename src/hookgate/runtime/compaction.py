"""Compaction: older turns summarised for the model, in requests that fit its budget.

The old messages go to the model in pieces, oldest first, each request within the
budget; each carries the summary so far, so an older summary is summarised again with
what follows it. A refused summary (a server whose context is smaller than the budget,
or one that is down) drops the oldest turns instead, with a marker: the turn then sends
no more than the budget, never everything. After a refusal, later compactions ask in
requests at most half the size of the refused one: never the same request again.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookgate.errors import ModelError
from hookgate.hooks.records import NamedTuple
from hookgate.messages import Message
from hookgate.models import ModelClient

SUMMARY_REQUEST = (
    "Summarise the conversation so far for your own later use: the user's goals, what "
    "was done, files touched, decisions and open questions. Be brief and factual."
)
SUMMARY_NOTE = "[summary of earlier turns]\n"
SUMMARY_ACK = "Understood."
#: The session event that records a compaction: the summary, and how many messages it
#: left as they were (`kept`).
COMPACTED = "compacted"
#: Messages kept verbatim at the end when older ones are summarised.
KEEP_RECENT = 6
#: Summary requests of one compaction at most: older pieces are left out, with a marker
#: (a session far past its budget, resumed with a smaller one, costs 8 requests, not
#: one per piece).
MAX_PIECES = 8
#: A summary carried into the next piece's request takes at most 1/`CARRY_SHARE` of it:
#: a longer one is cut, so the pieces keep room for the messages.
CARRY_SHARE = 2
#: Where a message is cut to fit a request (a single message larger than a piece).
CUT_MARK = "\n[…cut to fit the summary request]"


#: What carrying a summary adds to its text: the note before it, the acknowledgement.
_CARRIED = len(SUMMARY_NOTE) + len(SUMMARY_ACK)


def left_out_note(count: int, why: str) -> str:
    """The marker that stands for `count` messages no summary covers, and why."""
    return f"[{count} earlier message(s) left out: {why}]"


def size_of(messages: Sequence[Message]) -> int:
    """Characters of `messages` as the budget counts them: content and call arguments."""
    return sum(len(m.content) + sum(len(str(c.arguments)) for c in m.tool_calls) for m in messages)


def summarised(summary: str, recent: Sequence[Message]) -> list[Message]:
    """The conversation after a compaction: the summary, its acknowledgement, `recent`."""
    return [Message("user", SUMMARY_NOTE + summary), Message("assistant", SUMMARY_ACK), *recent]


def safe_cut(messages: Sequence[Message], cut: int) -> int:
    """Move `cut` back so no tool result is separated from the call that asked for it."""
    while 0 < cut < len(messages) and messages[cut].role == "tool":
        cut -= 1
    return cut


class Compaction(NamedTuple):
    """What a compaction left: the summary (or the marker that stands for what was left
    out), the messages kept verbatim after it, and whether the model wrote the summary."""

    summary: str
    kept: list[Message]
    summarised: bool
    refusal: str | None = None


class Compactor:
    """Compacts one session's conversation; remembers the size of a refused request."""

    def __init__(self) -> None:
        self._limit: int | None = None  # half the last refused request, once one was

    async def compact(
        self, messages: list[Message], model: ModelClient, system: str, budget: int
    ) -> Compaction | None:
        """The compaction of `messages` past `budget` characters; None when none is due
        (within the budget, or nothing old enough to summarise)."""
        if size_of(messages) <= budget or len(messages) <= KEEP_RECENT:
            return None
        cut = safe_cut(messages, len(messages) - KEEP_RECENT)
        if cut <= 0:
            return None
        old, recent = messages[:cut], messages[cut:]
        limit = min(budget, self._limit or budget)
        try:
            summary = await self._summarise(old, model, system, limit)
        except _Refused as refused:
            self._limit = max(1, refused.size // 2)
            return _dropped(messages, budget)._replace(refusal=refused.reason)
        return Compaction(summary, recent, summarised=True)

    async def _summarise(
        self, old: list[Message], model: ModelClient, system: str, limit: int
    ) -> str:
        """The summary of `old`, asked piece by piece; each request holds at most `limit`
        characters of conversation (the budget's measure: the system prompt and the
        request itself are not counted), the summary so far included."""
        carry = limit // CARRY_SHARE
        pieces = _pieces(old, limit, limit - carry)
        summary = ""
        if len(pieces) > MAX_PIECES:
            left_out = sum(len(piece) for piece in pieces[:-MAX_PIECES])
            summary = left_out_note(left_out, "too many to summarise at once")
            pieces = pieces[-MAX_PIECES:]
        for piece in pieces:
            before = summarised(summary[: max(0, carry - _CARRIED)], []) if summary else []
            try:
                reply = await model.complete(
                    [Message("system", system), *before, *piece, Message("user", SUMMARY_REQUEST)],
                    [],
                )
            except ModelError as exc:
                raise _Refused(size_of([*before, *piece]), str(exc)) from exc
            summary = reply.text
        return summary


class _Refused(Exception):
    def __init__(self, size: int, reason: str) -> None:
        super().__init__(reason)
        self.size, self.reason = size, reason


def _pieces(old: list[Message], first: int, room: int) -> list[list[Message]]:
    """`old` in consecutive pieces of at most `first` characters for the first, `room`
    for each later one (which carries the summary so far); a call and its results stay
    together, each cut to its share of `room` where they do not fit."""
    pieces: list[list[Message]] = [[]]
    used, capacity = 0, first
    for unit in _units(old):
        share = max(room // len(unit), len(CUT_MARK) + 1)
        fitted = [_fitted(message, share) for message in unit]
        size = size_of(fitted)
        if pieces[-1] and used + size > capacity:
            pieces.append([])
            used, capacity = 0, room
        pieces[-1] += fitted
        used += size
    return pieces


def _units(messages: list[Message]) -> list[list[Message]]:
    """`messages` grouped so that each call's results follow it in the same group."""
    units: list[list[Message]] = []
    for message in messages:
        if message.role == "tool" and units and units[-1][0].tool_calls:
            units[-1].append(message)
        else:
            units.append([message])
    return units


def _fitted(message: Message, room: int) -> Message:
    if size_of([message]) <= room:
        return message
    keep = max(0, room - len(CUT_MARK) - size_of([message._replace(content="")]))
    return message._replace(content=message.content[:keep] + CUT_MARK)


def _dropped(messages: list[Message], budget: int) -> Compaction:
    """The fallback of a refused summary: the newest messages that fit half of `budget`
    (room for the next turns, as a summary leaves), the rest left out with a marker; the
    latest message stays, whatever its size."""
    room = budget // 2
    start = len(messages) - 1
    while start > 0 and size_of(messages[start - 1 :]) <= room:
        start -= 1
    start = safe_cut(messages, start)  # a result never without its call
    note = left_out_note(start, "their summary was refused")
    return Compaction(note, messages[start:], summarised=False)
