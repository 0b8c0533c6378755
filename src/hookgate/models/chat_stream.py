"""A chat-completions SSE stream, read and checked: nothing the server sends is trusted.

`SseReader` splits the response bytes into the `data:` payloads of SSE events, and
keeps what the server wrote besides (an error body mid-stream) for the message; a
line longer than `MAX_LINE_BYTES` or bytes that are not UTF-8 fail the call without
holding more than the cap. `ReplyAssembler.add` checks each payload's shape (an
object, `choices` a list, `delta` an object, strings where strings belong) before it
takes anything from it, and stops a reply past `MAX_REPLY_CHARS` in all. Every fault
is a `StreamFault`, whose message completes "the model server at URL …".
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hookgate.errors import ModelError
from hookgate.messages import ModelReply, ToolCall
from hookgate.models.base import TextSink

#: Bytes one SSE line may hold. A whole reply is rarely over a few hundred KiB, and a
#: chunk is one delta of it; a longer line is a broken or hostile server, and reading
#: on would hold it all in memory (a 64 MiB line once cost 321 MiB).
MAX_LINE_BYTES = 8 * 1024 * 1024
#: Characters one reply may hold, its text and its tool calls' arguments together. The
#: most output a model is let write is about 128k tokens (~0.5 MB of text); past this
#: the server is broken or hostile, and reading on would hold it all in memory (one
#: that streamed text without end took the agent to 2.2 GiB in 10 s).
MAX_REPLY_CHARS = 16 * 1024 * 1024
#: How deep a tool call's arguments may nest objects and lists. A tool's parameters are
#: a few levels deep; the model's arguments travel on through hooks, the history and
#: the next request, each of which would meet a structure a thousand deep as a
#: RecursionError.
MAX_ARGUMENT_DEPTH = 64
#: Characters of a bad payload quoted in a message.
EXCERPT_CHARS = 200
#: Characters of one line the server wrote outside its events kept to read its error
#: from: an error body is a line or two; the message quotes `EXCERPT_CHARS` of it.
MAX_STRAY_CHARS = 64 * 1024
DONE = "[DONE]"


class StreamFault(ModelError):
    """The stream is not a well-formed chat-completions stream; says what was wrong."""


class SseReader:
    """Splits a response's bytes into the `data:` payloads of its SSE events.

    What else the server wrote is kept, capped at `EXCERPT_CHARS`, for the message of
    a stream that ends before its reply is complete: lines that are no SSE field (a
    JSON error body a server writes mid-stream, after its headers). An event that
    names itself an error (`event: error`, or llama.cpp's server's `error:` field)
    fails the call at once with the server's message.
    """

    def __init__(self) -> None:
        self._stray: list[str] = []
        self._stray_chars = 0

    async def payloads(self, chunks: AsyncIterator[bytes]) -> AsyncGenerator[str, None]:
        """The data of each SSE event in `chunks`; comments and other fields are skipped."""
        buffer = bytearray()
        event = _Event()
        try:
            async for chunk in chunks:
                scan = len(buffer)  # only the new bytes can hold the next newline
                buffer += chunk
                start = 0
                while (end := buffer.find(b"\n", max(scan, start))) >= 0:
                    line = _line(buffer[start:end])
                    start = end + 1
                    if line:
                        self._take_field(line, event)
                    elif event.data or event.error:  # a blank line ends an event
                        yield event.payload()
                        event = _Event()
                del buffer[:start]
                if len(buffer) > MAX_LINE_BYTES:
                    raise StreamFault(
                        f"sent a line longer than {MAX_LINE_BYTES} bytes; the reply is cut"
                    )
        finally:  # a last line with no newline: the end of an error body, as a rule
            last = bytes(buffer[:MAX_STRAY_CHARS]).decode(errors="replace")
            if _stray(last):
                self._keep(last)

    def said(self) -> str:
        """What the server wrote outside its events, as one short line ("" for nothing):
        an error's message where it is one, else the text, cut."""
        text = "\n".join(self._stray).strip()
        if not text:
            return ""
        try:
            body = json.loads(text)
        except (ValueError, RecursionError):
            return cut(text)
        if isinstance(body, dict) and body.get("error"):
            return _error_text(body["error"])
        return _error_text(body) if isinstance(body, dict) and "message" in body else cut(text)

    def _take_field(self, line: str, event: _Event) -> None:
        """One SSE field line: `data` is kept, and `event` and `error` for an error; a
        comment (`:`) and other fields are not; a line with no field name is the
        server's own words."""
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            event.data.append(value)
        elif name == "event":
            event.error = event.error or value == "error"
        elif name == "error":  # llama.cpp's server: `error: {"code":500,"message":…}`
            event.error = True
            event.data.append(value)
        elif _stray(line):
            self._keep(line)

    def _keep(self, text: str) -> None:
        if text.strip() and self._stray_chars < EXCERPT_CHARS:
            self._stray.append(text[:MAX_STRAY_CHARS])
            self._stray_chars += len(text)


@dataclass
class _Event:
    data: list[str] = field(default_factory=list)
    error: bool = False

    def payload(self) -> str:
        """The event's data; an error event raises `StreamFault` with its message."""
        text = "\n".join(self.data)
        if not self.error:
            return text
        try:
            body = json.loads(text)
        except (ValueError, RecursionError):
            body = text
        if isinstance(body, dict) and "error" in body:
            body = body["error"]
        raise StreamFault(f"reported an error mid-reply: {_error_text(body)}")


#: What an SSE field's name looks like; anything else before a colon is not a field.
_FIELD_NAME = re.compile(r"[A-Za-z][\w-]*")


def _stray(line: str) -> bool:
    """Whether `line` is no SSE field or comment: the server's own words (a JSON body)."""
    name, colon, _ = line.partition(":")
    if not line.strip() or line.startswith(":"):
        return False
    return line.startswith(("{", "[")) or not colon or not _FIELD_NAME.fullmatch(name)


def _line(raw: bytearray) -> str:
    if len(raw) > MAX_LINE_BYTES:
        raise StreamFault(f"sent a line longer than {MAX_LINE_BYTES} bytes; the reply is cut")
    try:
        return bytes(raw).decode().removesuffix("\r")
    except UnicodeDecodeError as exc:
        raise StreamFault(f"sent bytes that are not UTF-8 ({exc.reason})") from exc


@dataclass
class _PartialToolCall:
    id: str | None = None
    name: str = ""
    argument_parts: list[str] = field(default_factory=list)


class ReplyAssembler:
    """Accumulates the checked chunks of the first choice into one `ModelReply`."""

    def __init__(self) -> None:
        self.text_parts: list[str] = []
        self.calls: dict[int, _PartialToolCall] = {}
        self.finished = False
        self.done = False
        """Whether `[DONE]` came: nothing after it is read."""
        self._size = 0  # characters of text and arguments so far

    def add(self, payload: str, on_text: TextSink | None) -> None:
        """Take one event's data; a malformed one raises `StreamFault`."""
        if payload.strip() == DONE:
            self.done = True
            return
        chunk = _object(_json(payload), "a stream event")
        if chunk.get("error"):
            raise StreamFault(f"reported an error mid-reply: {_error_text(chunk['error'])}")
        # A usage-only chunk has no choices; other choices exist only when n > 1.
        for choice in _list(chunk.get("choices", []), "choices"):
            choice = _object(choice, "a choice")
            if choice.get("index", 0) == 0:
                self._add_choice(choice, on_text)

    def _add_choice(self, choice: Mapping[str, Any], on_text: TextSink | None) -> None:
        delta = _object(choice.get("delta", {}), "a delta")
        content = _text(delta.get("content"), "the content")
        if content:
            self._count(content)
            self.text_parts.append(content)
            if on_text is not None:
                on_text(content)
        for position, call in enumerate(_list(delta.get("tool_calls") or [], "tool_calls")):
            self._add_call(_object(call, "a tool call"), position)
        if _text(choice.get("finish_reason"), "the finish reason") is not None:
            self.finished = True

    def _add_call(self, call: Mapping[str, Any], position: int) -> None:
        index = call.get("index", position)
        if type(index) is not int:
            raise StreamFault(f"sent a tool call whose index is not an integer: {index!r}")
        partial = self.calls.setdefault(index, _PartialToolCall())
        if ident := _text(call.get("id"), "a tool call id"):
            partial.id = ident
        function = _object(call.get("function") or {}, "a tool call's function")
        # The name comes whole, once: OpenAI sends it in the call's first delta only,
        # llama.cpp's server in every delta; joining the pieces made `shellshell…`.
        if (name := _text(function.get("name"), "a tool name")) and not partial.name:
            partial.name = name
        if arguments := _text(function.get("arguments"), "a tool call's arguments"):
            self._count(arguments)
            partial.argument_parts.append(arguments)

    def _count(self, part: str) -> None:
        """Take `part` into the reply's size; past `MAX_REPLY_CHARS` the reply is cut."""
        self._size += len(part)
        if self._size > MAX_REPLY_CHARS:
            raise StreamFault(
                f"sent a reply longer than {MAX_REPLY_CHARS:,} characters; the reply is cut"
            )

    def reply(self) -> ModelReply:
        calls = tuple(
            _decode_tool_call(self.calls[index], position)
            for position, index in enumerate(sorted(self.calls), start=1)
        )
        return ModelReply(text="".join(self.text_parts), tool_calls=calls)


def _json(payload: str) -> Any:
    try:
        return json.loads(payload)
    except json.JSONDecodeError as exc:
        raise StreamFault(f"sent a stream event that is not JSON: {exc.msg}") from exc
    except RecursionError as exc:  # the decoder's own limit, about a thousand deep
        raise StreamFault("sent a stream event nested too deeply to read") from exc


def _object(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise StreamFault(f"sent {what} that is not a JSON object: {excerpt(value)}")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise StreamFault(f"sent {what} that are not a list: {excerpt(value)}")
    return value


def _text(value: Any, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise StreamFault(f"sent {what} that is not a string: {excerpt(value)}")
    return value


def _error_text(error: Any) -> str:
    """An error's message on one line; the whole error, compact, where it has none."""
    message = error.get("message") if isinstance(error, dict) else error
    if isinstance(message, str) and message.strip():
        return cut(message)
    return excerpt(error)


def _decode_tool_call(partial: _PartialToolCall, position: int) -> ToolCall:
    if not partial.name:
        raise ModelError(f"the model sent tool call #{position} without a tool name")
    raw = "".join(partial.argument_parts)
    try:
        arguments = json.loads(raw) if raw.strip() else {}
        too_deep = _deeper_than(arguments, MAX_ARGUMENT_DEPTH)
    except json.JSONDecodeError as exc:
        raise ModelError(
            f"the model sent malformed JSON arguments for tool {partial.name!r} "
            f"({exc.msg}): {cut(raw)!r}"
        ) from exc
    except RecursionError:  # deeper than the decoder goes
        too_deep = True
    if too_deep:
        raise ModelError(
            f"the model's arguments for tool {partial.name!r} are nested more than "
            f"{MAX_ARGUMENT_DEPTH} deep: {cut(raw)!r}"
        )
    if not isinstance(arguments, dict):
        raise ModelError(
            f"the model's arguments for tool {partial.name!r} are not a JSON object: {cut(raw)!r}"
        )
    # Some servers omit ids; the runtime needs one to pair the tool's answer.
    return ToolCall(id=partial.id or f"call_{position}", name=partial.name, arguments=arguments)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests lists and objects more than `limit` deep."""
    pending = [(value, 0)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, dict | list):
            if depth >= limit:
                return True
            children = node.values() if isinstance(node, dict) else node
            pending.extend((child, depth + 1) for child in children)
    return False


def excerpt(value: Any) -> str:
    """`value` as compact JSON, on one line, cut to `EXCERPT_CHARS`."""
    return cut(json.dumps(value, separators=(",", ":")))


def cut(text: str) -> str:
    """`text` on one line, cut to `EXCERPT_CHARS`."""
    line = " ".join(text.split())
    return line if len(line) <= EXCERPT_CHARS else line[: EXCERPT_CHARS - 1] + "…"
