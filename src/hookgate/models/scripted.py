"""`ScriptedModel`: a real model client that answers from a YAML script (`model: scripted:PATH`).

The script is a list of replies, consumed one per model call:

    - text: Let me look.            # streamed to on_text in a few chunks
      tool_calls:                   # optional; ids are generated: call_1, call_2, ...
        - name: read_file
          arguments: {path: notes.txt}
    - expect: "TODO"                # the last user/tool message must contain this
      text: The notes say TODO.
    - delay: 2.5                    # seconds to wait first (cancellation tests)
      text: Slow answer.
    - error: the model is overloaded  # fail this call with ModelError(message)

A reply needs `text`, `tool_calls` or `error`. Loading is strict: an unknown key or a
wrong type is a `ConfigError` naming file, line, key path and value. Each call consumes
its reply, even one that fails or is cancelled; a call with no reply left, or whose
`expect` does not match, raises `ModelError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hookgate.errors import ConfigError, ModelError
from hookgate.hooks.errors import ConfigErrors
from hookgate.hooks.files.yamlfile import did_you_mean, read_config, read_file
from hookgate.hooks.loop import needs_loop, pause
from hookgate.hooks.records import NamedTuple
from hookgate.messages import Message, ModelReply, ToolCall, ToolSpec
from hookgate.models.base import TextSink

REPLY_KEYS = ("text", "tool_calls", "expect", "error", "delay")
TOOL_CALL_KEYS = ("name", "arguments")
# Text reaches on_text in this many deltas, so front ends see real streaming.
TEXT_CHUNKS = 3
_TYPE_HINTS = {
    "a string": "quote it to make it a string",
    "a number of seconds >= 0": "e.g. delay: 1.5",
    "a mapping of JSON values": "e.g. arguments: {path: a.txt}; quote dates, times and number keys",
}
# How much of a message an `expect` failure quotes.
EXCERPT_CHARS = 200


class ScriptedToolCall(NamedTuple):
    """A tool call to make; the model assigns its id when the reply is used."""

    name: str
    arguments: Mapping[str, Any] = MappingProxyType({})


class ScriptedReply(NamedTuple):
    """One scripted answer, as validated from the script."""

    text: str = ""
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    expect: str | None = None
    error: str | None = None
    delay: float = 0.0


class ScriptedModel:
    """A `ModelClient` that plays back `ScriptedReply`s in order."""

    def __init__(self, replies: Sequence[ScriptedReply]) -> None:
        self.replies = tuple(replies)
        self.used = 0  # replies consumed so far, including failed and cancelled calls
        self._call_ids = 0

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        """Load a script; raises `ConfigError` for an unreadable or invalid one."""
        return cls(load_script(path))

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelReply:
        """Consume the next reply: wait its delay, check `expect`, then answer or fail."""
        if self.used >= len(self.replies):
            raise ModelError(f"the scripted model has no reply left ({self.used} used)")
        reply = self.replies[self.used]
        self.used += 1
        if reply.delay:
            await needs_loop()
            import asyncio

            await asyncio.sleep(reply.delay)
        if reply.expect is not None:
            _check_expect(reply.expect, messages, self.used - 1)
        if reply.error is not None:
            raise ModelError(reply.error)
        for chunk in _chunks(reply.text, TEXT_CHUNKS):
            if on_text is not None:
                on_text(chunk)
            await pause()  # let the consumer run between deltas, as with a real stream
        return ModelReply(text=reply.text, tool_calls=tuple(map(self._numbered, reply.tool_calls)))

    async def aclose(self) -> None:
        """Nothing to release."""

    def _numbered(self, call: ScriptedToolCall) -> ToolCall:
        self._call_ids += 1
        return ToolCall(id=f"call_{self._call_ids}", name=call.name, arguments=dict(call.arguments))


def _check_expect(expect: str, messages: Sequence[Message], index: int) -> None:
    last = next((m.content for m in reversed(messages) if m.role in ("user", "tool")), "")
    if expect not in last:
        excerpt = last if len(last) <= EXCERPT_CHARS else last[: EXCERPT_CHARS - 1] + "…"
        raise ModelError(
            f"script expected {expect!r} in the last user/tool message at reply [{index}], "
            f"got {excerpt!r}"
        )


def _chunks(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // count))
    return [text[start : start + size] for start in range(0, len(text), size)]


def load_script(path: Path) -> tuple[ScriptedReply, ...]:
    """Read and validate a script file; every mistake found is reported in one `ConfigError`."""
    try:
        source = read_file(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"{path}: cannot read the model script: {reason}") from exc
    document = read_config(source, str(path))
    reader = _ScriptReader(str(path))
    replies = reader.read(document)
    if len(reader.errors) == 1:
        raise reader.errors[0]
    if reader.errors:
        raise ConfigErrors(reader.errors)
    return replies


class _ScriptReader:
    """Validates the loaded YAML, collecting errors instead of stopping at the first."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.errors: list[ConfigError] = []

    def fail(self, line: int, where: str, problem: str, hint: str | None = None) -> None:
        prefix = f"{self.filename}:{line + 1}: "
        self.errors.append(ConfigError(f"{prefix}{where}: {problem}", hint=hint))

    def read(self, document: object) -> tuple[ScriptedReply, ...]:
        if not isinstance(document, list) or not document:
            got = "an empty list" if isinstance(document, list) else _describe(document)
            self.fail(
                _line_of(document),
                "top level",
                f"expected a list of replies, got {got}",
                hint="write one '- text: ...' or '- tool_calls: [...]' item per model call",
            )
            return ()
        replies = []
        for index, item in enumerate(document):
            reply = self.reply(item, f"[{index}]", _line(_lines(document).item, index))
            if reply is not None:
                replies.append(reply)
        return tuple(replies)

    def reply(self, node: object, where: str, line: int) -> ScriptedReply | None:
        if not isinstance(node, Mapping):
            self.fail(
                line,
                where,
                f"expected a mapping like {{text: ...}}, got {_describe(node)}",
                hint="write '- text: ...' rather than '- ...'",
            )
            return None
        errors_before = len(self.errors)
        self.unknown_keys(node, where, REPLY_KEYS)
        text = self.optional(node, where, "text", _as_str, "a string")
        calls = self.tool_calls(node, where)
        expect = self.optional(node, where, "expect", _as_str, "a string")
        error = self.optional(node, where, "error", _as_str, "a string")
        delay = self.optional(node, where, "delay", _as_delay, "a number of seconds >= 0")
        if len(self.errors) > errors_before:
            return None  # a misspelt key also explains what seems to be missing
        if not {"text", "tool_calls", "error"} & set(node):
            self.fail(line, where, "a reply needs 'text', 'tool_calls' or 'error'")
            return None
        if "error" in node and {"text", "tool_calls"} & set(node):
            self.fail(line, where, "'error' cannot be combined with 'text' or 'tool_calls'")
            return None
        return ScriptedReply(text or "", calls, expect, error, delay or 0.0)

    def tool_calls(self, node: Any, where: str) -> tuple[ScriptedToolCall, ...]:
        if "tool_calls" not in node:
            return ()
        value, path = node["tool_calls"], f"{where}.tool_calls"
        if not isinstance(value, list):
            self.fail(
                _line(node.lc.value, "tool_calls"),
                path,
                f"expected a list of tool calls, got {_describe(value)}",
                hint="write tool_calls: [{name: read_file, arguments: {path: a.txt}}]",
            )
            return ()
        calls = []
        for index, item in enumerate(value):
            call = self.tool_call(item, f"{path}[{index}]", _line(_lines(value).item, index))
            if call is not None:
                calls.append(call)
        return tuple(calls)

    def tool_call(self, node: object, where: str, line: int) -> ScriptedToolCall | None:
        if not isinstance(node, Mapping):
            self.fail(
                line,
                where,
                f"expected a mapping with 'name' and 'arguments', got {_describe(node)}",
                hint="write {name: read_file, arguments: {path: a.txt}}",
            )
            return None
        errors_before = len(self.errors)
        self.unknown_keys(node, where, TOOL_CALL_KEYS)
        name = self.optional(node, where, "name", _as_str, "a string")
        if name is None and "name" not in node:
            self.fail(line, where, "a tool call needs a 'name'", hint="add name: <tool name>")
        arguments = self.optional(node, where, "arguments", _as_object, "a mapping of JSON values")
        if len(self.errors) > errors_before or name is None:
            return None
        return ScriptedToolCall(name=name, arguments=arguments or {})

    def unknown_keys(self, node: Any, where: str, allowed: Sequence[str]) -> None:
        for key in node:
            if key in allowed:
                continue
            hint = did_you_mean(str(key), allowed) or f"known keys: {', '.join(allowed)}"
            self.fail(_line(node.lc.key, key), f"{where}.{key}", "unknown key", hint=hint)

    def optional(
        self,
        node: Any,
        where: str,
        key: str,
        convert: Callable[[object], Any],
        expected: str,
    ) -> Any:
        """The converted value of `key`, or None if absent or invalid (then an error is noted)."""
        if key not in node:
            return None
        value = node[key]
        try:
            return convert(value)
        except (TypeError, ValueError, RecursionError):  # RecursionError: `&a [*a]`
            hint = _TYPE_HINTS.get(expected)
            self.fail(
                _line(node.lc.value, key),
                f"{where}.{key}",
                f"expected {expected}, got {_describe(value)}",
                hint=hint,
            )
            return None


def _as_str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError
    return str(value)


def _as_delay(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ValueError
    try:
        return float(value)
    except OverflowError:  # a whole number past what a float holds: wait for good
        return math.inf


def _as_object(value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError
    return _as_json(value)  # type: ignore[no-any-return]


def _as_json(value: object) -> Any:
    """Plain JSON values from ruamel's round-trip types; dates, `1:` keys and the like raise."""
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise TypeError(f"JSON object keys are strings: {list(value)!r}")
        return {str(key): _as_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_json(item) for item in value]
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    raise TypeError(f"not a JSON value: {value!r}")


def _describe(value: object) -> str:
    """A value for an error message: its repr in plain Python terms, shortened."""
    import datetime  # an error's wording alone needs it (the YAML parser made the date)

    if value is None:
        return "nothing (null)"
    if isinstance(value, datetime.date):
        return f"the date {value.isoformat()} (quote it to make it a string)"
    try:
        text = repr(_as_json(value))
    except (TypeError, RecursionError):
        text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _line(lookup: Callable[[Any], Any], key: object) -> int:
    """The 0-based line ruamel noted for `key` (0 where it noted none, as in `!!omap`)."""
    try:
        position = lookup(key)
    except (KeyError, IndexError, TypeError):
        return 0
    return int(position[0]) if position else 0


def _lines(node: Any) -> Any:
    """The line table of a list or mapping as read (ruamel's, or the parse cache's)."""
    return node.lc


def _line_of(node: object) -> int:
    line = getattr(getattr(node, "lc", None), "line", None)
    return line if isinstance(line, int) else 0
