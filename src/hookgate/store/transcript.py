"""The session's transcript for hooks: one JSONL file in Claude Code's transcript shape.

`transcript_path(home, session_id)` is where it lives. `Transcript` writes every message
the history records, as it records it, so a hook reads the conversation up to the event
it handles; it holds exactly what the history holds (a blocked question's marker, a
redacted call), never more, with tool calls under Claude's names and argument shapes
(the claude format's own mapping, `claude_tools`). It is private (0600) and derived from
the session file: when a session resumes it is kept where it holds every message
already (the last run wrote them), else rewritten from the file in one pass. A write
that fails costs a notice, never the turn.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hookgate.hooks.formats.claude_tools import claude_input, claude_tool_name
from hookgate.hooks.records import NamedTuple
from hookgate.messages import Message
from hookgate.store.session import utc_now

#: The folder under `$HOOKGATE_HOME` that holds the transcripts.
TRANSCRIPTS = "transcripts"
#: The variable that tells a hook where the transcript is.
TRANSCRIPT_ENV = "HOOKGATE_TRANSCRIPT_PATH"
#: Claude Code writes compact JSON: scripts grep for `"role":"assistant"`.
COMPACT = (",", ":")
FILE_MODE = 0o600
DIR_MODE = 0o700


def random_uuid() -> str:
    """A random (version 4) UUID as Claude's transcripts write them: `uuid.uuid4()`
    without the `uuid` module, which imports `platform` (2 ms of every start)."""
    data = bytearray(os.urandom(16))
    data[6] = data[6] & 0x0F | 0x40  # version 4
    data[8] = data[8] & 0x3F | 0x80  # the RFC 4122 variant
    text = data.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class Recorded(NamedTuple):
    """What a session file holds of the conversation, as a transcript needs it: the
    number of its messages, the last, and how to read them all (only where the
    transcript must be written afresh: a resume need not parse them all)."""

    messages: int
    last: Message | None
    read_all: Callable[[], Iterable[Message]]


def transcript_path(home: Path, session_id: str) -> Path:
    """Where the transcript of `session_id` lives under the hookgate home `home`."""
    return home / TRANSCRIPTS / f"{session_id}.jsonl"


class Transcript:
    """An open transcript file, appended to line by line; `close` when the session ends."""

    def __init__(
        self, path: Path, session_id: str, model: str, cwd: str, notify: Callable[[str], None]
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.model = model
        self.cwd = cwd  # where a call's relative paths start: Claude writes them absolute
        self._notify = notify
        self._fd: int | None = None
        self._last_uuid: str | None = None

    @classmethod
    def start(
        cls,
        home: Path,
        session_id: str,
        *,
        model: str,
        cwd: str,
        recorded: Recorded,
        notify: Callable[[str], None],
    ) -> Transcript:
        """The transcript of `session_id` holding the `recorded` messages (a resumed
        session's): the file as the last run left it where it holds them all already (as
        many lines, the last one the last message), else written afresh, in one pass."""
        transcript = cls(transcript_path(home, session_id), session_id, model, cwd, notify)
        try:
            transcript.path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            kept = transcript._up_to_date(recorded) if recorded.messages else None
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
            transcript._fd = os.open(
                transcript.path, flags | (0 if kept else os.O_TRUNC) | os.O_CLOEXEC, FILE_MODE
            )
            os.fchmod(transcript._fd, FILE_MODE)  # an older file may have been looser
        except OSError as exc:
            transcript._fail(exc)
            return transcript
        if kept:
            transcript._last_uuid = kept
        elif recorded.messages:
            transcript._write_all(recorded.read_all())  # one write, not one per message
        return transcript

    def _up_to_date(self, recorded: Recorded) -> str | None:
        """The last line's uuid where the file holds the `recorded` messages already:
        one line per message, the last one this session's and the last message's. Else None."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as file:
                data = file.read()
        except OSError:
            return None
        if recorded.last is None or not data.endswith(b"\n"):
            return None
        if data.count(b"\n") != recorded.messages:
            return None
        try:
            last = json.loads(data[data.rfind(b"\n", 0, len(data) - 1) + 1 :])
        except ValueError:
            return None
        expected = _claude_message(recorded.last, self.model, self.cwd)
        if not isinstance(last, dict) or last.get("sessionId") != self.session_id:
            return None
        written = last.get("message")
        expected = json.loads(json.dumps(expected, ensure_ascii=False))
        # An answer's `id` is drawn anew for every line written: the rest must match.
        if not isinstance(written, dict) or {**written, "id": None} != {**expected, "id": None}:
            return None
        uuid = last.get("uuid")
        return uuid if isinstance(uuid, str) else None

    def append(self, message: Message) -> None:
        """Write `message` as one line of Claude's shape."""
        self._write_all((message,))

    def _write_all(self, messages: Iterable[Message]) -> None:
        """Write `messages` (but system ones: not the conversation) as lines, in one pass."""
        if self._fd is None:
            return
        lines, last = [], self._last_uuid
        for message in messages:
            if message.role != "system":
                line_uuid = random_uuid()
                lines.append(self._line(message, last, line_uuid))
                last = line_uuid
        if not lines:
            return
        try:
            view = memoryview("".join(lines).encode("utf-8", "backslashreplace"))
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self._fail(exc)
            return
        self._last_uuid = last

    def _line(self, message: Message, parent: str | None, line_uuid: str) -> str:
        """One line of Claude Code's shape, compact and in its key order."""
        kind = "assistant" if message.role == "assistant" else "user"
        body = _claude_message(message, self.model, self.cwd)
        # Claude Code's key order: an assistant line has its message before its type.
        record: dict[str, Any] = {"parentUuid": parent, "isSidechain": False}
        if kind == "assistant":
            record |= {"message": body, "type": kind}
        else:
            record |= {"type": kind, "message": body}
        record |= {
            "uuid": line_uuid,
            "timestamp": _timestamp(),
            "cwd": self.cwd,
            "sessionId": self.session_id,
        }
        return json.dumps(record, ensure_ascii=False, separators=COMPACT) + "\n"

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def _fail(self, exc: OSError) -> None:
        self.close()
        self._notify(f"the transcript {self.path} is no longer written: {exc.strerror or exc}")


def _timestamp() -> str:
    """Now, as Claude's transcripts write it: UTC, milliseconds, `Z`."""
    return utc_now().replace("+00:00", "Z")


def _claude_message(message: Message, model: str, cwd: str) -> dict[str, Any]:
    """`message` as Claude's transcript holds it, keys in Claude's order: a question's
    content a string, tool results as `user` blocks, an answer a list of blocks."""
    if message.role == "tool":
        block = {
            "tool_use_id": message.tool_call_id,
            "type": "tool_result",
            "content": message.content,
        }
        return {"role": "user", "content": [block]}
    if message.role == "user":
        return {"role": "user", "content": message.content}
    content: list[dict[str, Any]] = []
    if message.content:
        content.append({"type": "text", "text": message.content})
    content += [
        {
            "type": "tool_use",
            "id": call.id,
            "name": claude_tool_name(call.name),
            "input": claude_input(call.name, call.arguments, cwd),
        }
        for call in message.tool_calls
    ]
    stop = "tool_use" if message.tool_calls else "end_turn"
    return {
        "id": f"msg_{random_uuid().replace('-', '')}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
    }
