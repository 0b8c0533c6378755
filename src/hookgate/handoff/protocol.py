"""The hand-off stream: what an asked agent writes on stdout, one JSON object a line.

    {"type": "text", "delta": "..."}     a piece of the answer, as the model writes it
    {"type": "notice", "text": "..."}    a notice of the asked agent (its hooks, its tools)
    {"type": "answer", "text": "...", "session": "..."}   the final answer: the last line;
                                         `session` (when it was saved) lets the asker
                                         send the agent on (Claude's SubagentStop block)
    {"type": "blocked", "reason": "...", "response": "..."}   its preGeneration said no
    {"type": "failed", "message": "..."} its turn failed

Both sides read this module: `StreamWriter` in the asked agent, `StreamReader` in the
asker. A line that is not one of these is a protocol error, never text to show.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

#: Exit statuses of the asked agent, as `-p` uses them.
EXIT_ANSWERED, EXIT_FAILED, EXIT_BLOCKED = 0, 1, 2
#: Characters of a bad line quoted in the error that reports it.
EXCERPT_CHARS = 120


@dataclass(frozen=True)
class Final:
    """The last line of the stream: how the asked agent's turn ended."""

    kind: str
    """"answer", "blocked" or "failed"."""
    text: str
    """The answer, the hook's response, or the failure's message."""
    reason: str | None = None
    """Why its own hook stopped the question ("blocked" only)."""
    session: str | None = None
    """The asked agent's saved session ("answer" only): resuming it sends the agent on."""


class StreamWriter:
    """The asked agent's side: each call writes one line and flushes it.

    A closed pipe (the asker is gone) ends the writing quietly: the turn still ends
    normally, its hooks included.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream: BinaryIO | None = stream

    def text(self, delta: str) -> None:
        self._write({"type": "text", "delta": delta})

    def notice(self, text: str) -> None:
        self._write({"type": "notice", "text": text})

    def final(self, final: Final) -> None:
        if final.kind == "answer":
            record = {"type": "answer", "text": final.text}
            if final.session is not None:
                record["session"] = final.session
            self._write(record)
        elif final.kind == "blocked":
            self._write({"type": "blocked", "reason": final.reason, "response": final.text})
        else:
            self._write({"type": "failed", "message": final.text})

    def _write(self, record: dict[str, Any]) -> None:
        if self._stream is None:
            return
        line = json.dumps(record, ensure_ascii=False) + "\n"
        try:
            self._stream.write(line.encode("utf-8", "backslashreplace"))
            self._stream.flush()
        except (BrokenPipeError, ValueError):  # ValueError: the stream was closed
            self._stream = None


class StreamReader:
    """The asker's side: fed raw stdout chunks, it calls back for text and notices.

    Never raises: `feed` runs inside the event loop's pipe reader. The first bad line
    is kept in `error`, and nothing after it is believed.
    """

    def __init__(self, on_text: Callable[[str], None], on_notice: Callable[[str], None]) -> None:
        self._on_text = on_text
        self._on_notice = on_notice
        self._pending = bytearray()
        self.streamed: list[str] = []
        self.final: Final | None = None
        self.error: str | None = None

    def feed(self, chunk: bytes) -> None:
        self._pending += chunk
        *lines, rest = self._pending.split(b"\n")
        self._pending = bytearray(rest)
        for line in lines:
            self._line(line)

    def close(self) -> None:
        """The stream ended: a last line without its newline is a torn line."""
        if self._pending.strip():
            self._bad(bytes(self._pending), "a line cut short")
        self._pending.clear()

    def _line(self, raw: bytes | bytearray) -> None:
        if self.error is not None or not raw.strip():
            return
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            self._bad(raw, "not JSON")
            return
        if self.final is not None:
            self._bad(raw, "a line after the final one")
        elif not isinstance(record, dict) or not self._apply(record):
            self._bad(raw, "not a hand-off record")

    def _apply(self, record: dict[str, Any]) -> bool:
        kind = record.get("type")
        fields = {key: value for key, value in record.items() if key != "type"}
        if not all(isinstance(value, str) or value is None for value in fields.values()):
            return False
        if kind == "text" and isinstance(fields.get("delta"), str):
            self.streamed.append(fields["delta"])
            self._on_text(fields["delta"])
        elif kind == "notice" and isinstance(fields.get("text"), str):
            self._on_notice(fields["text"])
        elif kind == "answer" and isinstance(fields.get("text"), str):
            self.final = Final("answer", fields["text"], session=fields.get("session"))
        elif kind == "blocked" and isinstance(fields.get("response"), str):
            self.final = Final("blocked", fields["response"], fields.get("reason") or "")
        elif kind == "failed" and isinstance(fields.get("message"), str):
            self.final = Final("failed", fields["message"])
        else:
            return False
        return True

    def _bad(self, raw: bytes | bytearray, what: str) -> None:
        if self.error is None:
            text = raw.decode("utf-8", "replace")
            excerpt = text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"
            self.error = f"the asked agent wrote {what} on its hand-off stream: {excerpt!r}"
