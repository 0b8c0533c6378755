"""The conversation of a session: in memory for the model, on disk for the user.

Every message is written to the session file as it happens. A file that cannot be
written (full disk, read-only directory) costs the user a notice, not the turn: the
conversation goes on in memory. Compaction summarises old turns for the model only,
through a path that runs no hooks; the file keeps every message, and the summary too,
so a resumed session starts from it. Read back, a file is repaired into a conversation
strict servers accept: every call answered once, stray results left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hookgate.errors import SessionError
from hookgate.messages import Message
from hookgate.models import ModelClient
from hookgate.runtime.compaction import (
    COMPACTED,
    KEEP_RECENT,
    SUMMARY_ACK,
    SUMMARY_NOTE,
    SUMMARY_REQUEST,
    Compactor,
    size_of,
    summarised,
)
from hookgate.store.session import Session, SessionEvent
from hookgate.store.transcript import Transcript

__all__ = [
    "COMPACTED",
    "KEEP_RECENT",
    "SUMMARY_ACK",
    "SUMMARY_NOTE",
    "SUMMARY_REQUEST",
    "UNSAVED_RESULT",
    "History",
    "answer_every_call",
    "replay",
]

#: The answer a resumed session gives a tool call whose result never reached the file
#: (the disk filled, or hookgate was killed mid-call): servers refuse a call unanswered.
UNSAVED_RESULT = "[no result: it was not saved in the session file]"


class History:
    def __init__(
        self,
        session: Session | None,
        messages: list[Message],
        notify: Callable[[str], None],
    ) -> None:
        self.session = session
        self.messages = messages
        self._notify = notify
        self._write_failed = False
        self.transcript: Transcript | None = None
        """Where every appended message is also written for hooks to read, if anywhere."""
        self._compactor = Compactor()

    @classmethod
    def load(
        cls,
        session: Session | None,
        notify: Callable[[str], None],
        entries: list[Message | SessionEvent] | None = None,
    ) -> History:
        """The history of `session` as the model should read it (empty for None), from
        its `entries` where the caller has read them already (a file is read once)."""
        if session is None:
            return cls(None, [], notify)
        messages, dropped = replay(session.entries() if entries is None else entries)
        if dropped:
            notify(
                f"left out {dropped} tool result(s) of {session.path} that answered no open "
                f"call (two hookgates wrote this session at once?)"
            )
        return cls(session, messages, notify)

    @property
    def saved(self) -> bool:
        """Whether the session file holds the whole conversation (it can be resumed)."""
        return self.session is not None and not self._write_failed

    def close(self) -> None:
        """Let go of the session file (its lock); the history stays readable."""
        try:
            if self.session is not None:
                self.session.close()
        finally:
            if self.transcript is not None:
                self.transcript.close()

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self._write(lambda session: session.append_message(message))
        if self.transcript is not None:
            self.transcript.append(message)

    def event(self, kind: str, data: Mapping[str, Any]) -> None:
        self._write(lambda session: session.append_event(kind, data))

    def _write(self, action: Callable[[Session], None]) -> None:
        if self.session is None or self._write_failed:
            return
        try:
            action(self.session)
        except SessionError as exc:
            self._write_failed = True
            self._notify(f"history is no longer saved: {exc}")

    def size(self) -> int:
        return size_of(self.messages)

    async def compact(self, model: ModelClient, system: str, budget: int) -> bool:
        """Summarise older messages when the conversation exceeds `budget` characters
        (`hookgate.runtime.compaction`); where the summary is refused, leave the oldest out.

        Asks the model directly, with no tools and no hooks: the summary is the
        model's own notes, not a turn. Returns whether it compacted.
        """
        done = await self._compactor.compact(self.messages, model, system, budget)
        if done is None:
            return False
        if done.refusal is not None:
            self._notify(
                f"could not summarise older turns: {done.refusal}; "
                f"{len(self.messages) - len(done.kept)} older message(s) left out instead"
            )
        data = {
            "messages_summarised": len(self.messages) - len(done.kept),
            "kept": len(done.kept),
            "summary": done.summary,
            "summarised": done.summarised,
        }
        self.messages[:] = summarised(done.summary, done.kept)
        self.event(COMPACTED, data)
        return True


def replay(entries: list[Message | SessionEvent]) -> tuple[list[Message], int]:
    """What the model reads of a session file, and how many stray results were left out.

    A compaction record replaces what came before it, but for the messages it kept, with
    its summary: just as it did in memory, so a resumed session does not summarise again.
    """
    conversation: list[Message] = []
    dropped = 0
    for entry in entries:
        if isinstance(entry, Message):
            conversation.append(entry)
            continue
        summary, kept = entry.data.get("summary"), entry.data.get("kept")
        if entry.kind != COMPACTED or not isinstance(summary, str) or not isinstance(kept, int):
            continue  # another event, or a compaction of an older hookgate (no summary saved)
        conversation, left_out = answer_every_call(conversation)
        dropped += left_out
        if 0 <= kept <= len(conversation):
            conversation = summarised(summary, conversation[len(conversation) - kept :])
    conversation, left_out = answer_every_call(conversation)
    return conversation, dropped + left_out


def answer_every_call(messages: list[Message]) -> tuple[list[Message], int]:
    """`messages` as strict servers take them, and how many tool results were left out.

    Each call gets one answer right after its assistant message: its own result, or
    `UNSAVED_RESULT`. A result that answers no call still open (two writers interleaved
    their turns, or it answers a call twice) is left out: servers refuse it.
    """
    repaired: list[Message] = []
    waiting: list[str] = []  # ids of the last assistant message's calls not yet answered
    dropped = 0
    for message in messages:
        if message.role == "tool":
            if message.tool_call_id in waiting:
                waiting.remove(message.tool_call_id)
                repaired.append(message)
            else:
                dropped += 1
            continue
        repaired += [Message("tool", UNSAVED_RESULT, tool_call_id=id_) for id_ in waiting]
        repaired.append(message)
        waiting = [call.id for call in message.tool_calls] if message.role == "assistant" else []
    repaired += [Message("tool", UNSAVED_RESULT, tool_call_id=id_) for id_ in waiting]
    return repaired, dropped
