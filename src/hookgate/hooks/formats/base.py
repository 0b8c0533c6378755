"""What a reply format is: how a payload is written to a hook and its answer read back.

A format turns the engine's payload (a flat mapping of the event's fields) into the
bytes on the hook's stdin, and the finished process into a `HookReply`; anything
wrong with the answer is a `BadReply`, which the runner treats as the hook failing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from types import MappingProxyType

from hookgate.hooks.errors import HookgateError
from hookgate.hooks.events import EventSpec, OnError
from hookgate.hooks.process import ProcessResult
from hookgate.hooks.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, Protocol, TypeAlias
else:  # a structural type for the checker; at run time, a class like any other
    Protocol = object

#: Exit status that blocks: the hook said no on purpose.
EXIT_BLOCK = 2
#: Exit statuses of a shell that could not run the command: never a deliberate block.
EXIT_NOT_EXECUTABLE = 126
EXIT_NOT_FOUND = 127


Permission: TypeAlias = "Literal['allow', 'ask']"


#: Characters from which a text in an event is written to a process in slices, never
#: encoded whole (`pieces`): an event holding one is encoded as it is written.
BIG = 1024 * 1024


class BadReply(HookgateError):
    """The hook ran but its answer cannot be applied; the hook has failed."""


#: No changes: the default of `HookReply.changes`, shared and read-only.
NO_CHANGES: Mapping[str, Any] = MappingProxyType({})


class HookReply(NamedTuple):
    """One hook's decision, validated for its event."""

    block: bool = False
    reason: str | None = None
    changes: Mapping[str, Any] = NO_CHANGES
    """Payload fields replaced, each one the event allows to change."""
    context: str | None = None
    message: str | None = None
    permission: Permission | None = None
    """On a call: `allow` skips the consent prompt (never a deny rule), `ask` shows it
    even where none would be shown. A block is a deny and wins over both."""
    stop: str | None = None
    """Set: the whole turn stops after this event, with this reason for the user."""
    go_on: str | None = None
    """Set on the end of a turn: the agent goes on, with this as its next instruction."""


ALLOW = HookReply()


class ReplyFormat(Protocol):
    """A hook protocol: how the event is written and how the reply is read."""

    name: str
    default_timeout: float

    def supports(self, event: EventSpec) -> bool:
        """Whether this format can express `event` at all."""
        ...

    def timeout_for(self, event: EventSpec) -> float:
        """Seconds a hook of `event` may take when its entry names no `timeout`."""
        ...

    def on_error_for(self, event: EventSpec) -> OnError:
        """What a failure means when the hook's entry names no `onError`."""
        ...

    def compile_matcher(self, text: str) -> re.Pattern[str] | None:
        """A `matcher` in this format's syntax; None matches everything; raises `re.error`."""
        ...

    def match_name(self, name: str) -> str:
        """The name a matcher of this format is tested against, for a tool or agent `name`."""
        ...

    def environment(self, project_dir: str) -> dict[str, str]:
        """Variables this format's hooks get besides the `HOOKGATE_*` ones."""
        ...

    def encode(self, event: EventSpec, payload: Mapping[str, Any]) -> bytes:
        """The bytes written to the hook's stdin."""
        ...

    def decode(
        self, event: EventSpec, payload: Mapping[str, Any], result: ProcessResult
    ) -> HookReply:
        """The decision of a finished hook; raises `BadReply`."""
        ...


class FormatDefaults:
    """hookgate's own conventions, for a format that keeps them: regex matchers on
    hookgate's tool names, the format's one default timeout, the event's `onError`."""

    default_timeout: float

    def timeout_for(self, event: EventSpec) -> float:
        return self.default_timeout

    def on_error_for(self, event: EventSpec) -> OnError:
        return event.default_on_error

    def compile_matcher(self, text: str) -> re.Pattern[str] | None:
        return re.compile(text)

    def match_name(self, name: str) -> str:
        return name

    def environment(self, project_dir: str) -> dict[str, str]:
        return {}


def check_exit(result: ProcessResult) -> None:
    """Raise `BadReply` for every exit that is neither 0 (allow) nor 2 (block)."""
    code = result.returncode
    if code in (0, EXIT_BLOCK):
        return
    detail = _stderr_tail(result)
    if result.signal is not None:
        raise BadReply(f"killed by signal {result.signal}{detail}")
    if code == EXIT_NOT_EXECUTABLE:
        raise BadReply(f"exit 126: the command is not executable{detail}")
    if code == EXIT_NOT_FOUND:
        raise BadReply(f"exit 127: the command was not found{detail}")
    raise BadReply(f"exit {code}{detail}")


def block_reason(result: ProcessResult) -> str:
    """The reason a hook that exited 2 gave: stdout preferred, stderr otherwise."""
    for stream in (result.stdout, result.stderr):
        text = stream.decode("utf-8", "replace").strip()
        if text:
            return text
    return "no reason given"


def read_json_object(stdout: bytes) -> dict[str, Any] | None:
    """stdout as a JSON object, or None when it is empty or not one."""
    text = stdout.decode("utf-8", "replace").strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's stack
        return None
    return value if isinstance(value, dict) else None


def optional_text(reply: Mapping[str, Any], key: str, prefix: str = "") -> str | None:
    """`reply[key]` when it is a string, None when absent; raises `BadReply` otherwise."""
    value = reply.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadReply(f"'{prefix}{key}' must be a string, got {type(value).__name__}")
    return value


def _stderr_tail(result: ProcessResult, limit: int = 300) -> str:
    text = result.stderr.decode("utf-8", "replace").strip()
    if not text:
        return ""
    return ": " + (text if len(text) <= limit else "…" + text[-limit:])


def has_big_text(value: Any) -> bool:
    """Whether a dict or list holds, at any depth, a text of `BIG` characters or more."""
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is str:
            if len(item) >= BIG:
                return True
        elif (kind is dict or kind is list or kind is tuple) and has_big_text(item):
            return True
    return False
