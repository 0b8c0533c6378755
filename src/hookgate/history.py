"""The conversation of a session: in memory for the model, on disk for the user.

Every message is written to the session file as it happens. A file that cannot be
written (full disk, read-only directory) costs the user a notice, not the turn: the
conversation goes on in memory. Compaction summarises old turns for the model only,
through a path that runs no hooks; the file keeps every message. Read back, a file is
repaired into a conversation strict servers accept: every call answered once, stray
results left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hookgate.errors import ModelError, SessionError
from hookgate.messages import Message
from hookgate.models import ModelClient
from hookgate.session import Session

SUMMARY_REQUEST = (
    "Summarise the conversation so far for your own later use: the user's goals, what "
    "was done, files touched, decisions and open questions. Be brief and factual."
)
#: Messages kept verbatim at the end when older ones are summarised.
KEEP_RECENT = 6
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

    @classmethod
    def load(cls, session: Session | None, notify: Callable[[str], None]) -> History:
        """The history of `session` as the model should read it (empty for None)."""
        if session is None:
            return cls(None, [], notify)
        messages, dropped = answer_every_call(session.messages())
        if dropped:
            notify(
                f"left out {dropped} tool result(s) of {session.path} that answered no open "
                f"call (two hookgates wrote this session at once?)"
            )
        return cls(session, messages, notify)

    def close(self) -> None:
        """Let go of the session file (its lock); the history stays readable."""
        if self.session is not None:
            self.session.close()

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self._write(lambda session: session.append_message(message))

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
        return sum(
            len(m.content) + sum(len(str(c.arguments)) for c in m.tool_calls) for m in self.messages
        )

    async def compact(self, model: ModelClient, system: str, budget: int) -> bool:
        """Summarise older messages when the conversation exceeds `budget` characters.

        Asks the model directly, with no tools and no hooks: the summary is the
        model's own notes, not a turn. Returns whether it compacted.
        """
        if self.size() <= budget or len(self.messages) <= KEEP_RECENT:
            return False
        cut = _safe_cut(self.messages, len(self.messages) - KEEP_RECENT)
        if cut <= 0:
            return False
        old, recent = self.messages[:cut], self.messages[cut:]
        request = [Message("system", system), *old, Message("user", SUMMARY_REQUEST)]
        try:
            summary = await model.complete(request, [])
        except ModelError as exc:
            self._notify(f"could not summarise older turns: {exc}")
            return False
        note = Message("user", f"[summary of earlier turns]\n{summary.text}")
        self.messages[:] = [note, Message("assistant", "Understood."), *recent]
        self.event("compacted", {"messages_summarised": len(old)})
        return True


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


def _safe_cut(messages: list[Message], cut: int) -> int:
    """Move `cut` back so no tool result is separated from the call that asked for it."""
    while cut > 0 and messages[cut].role == "tool":
        cut -= 1
    return cut
