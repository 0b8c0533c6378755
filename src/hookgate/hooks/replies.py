"""What a hook answered, as a `HookReply`, or what its failure says.

A Python hook's answer is validated as a native reply; a process, persistent or http
hook's output is decoded by its format; an exception is a failure whose message names
what went wrong.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from hookgate.hooks.config import HookSpec
from hookgate.hooks.events import EventSpec
from hookgate.hooks.formats import BadReply, HookReply, ReplyFormat, reply_from_json
from hookgate.hooks.process import ProcessResult, SpawnError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def python_reply(spec: EventSpec, envelope: dict[str, Any], answer: Any) -> HookReply:
    """A Python hook's answer, validated as a native reply."""
    if answer is None:
        return HookReply()
    if isinstance(answer, HookReply):
        answer = _as_native(answer)  # built by hand: validated like any other answer
    if not isinstance(answer, Mapping):
        raise BadReply(f"a Python hook must return a mapping or None, got {type(answer).__name__}")
    return reply_from_json(spec, envelope, answer)


def process_reply(
    fmt: ReplyFormat, spec: EventSpec, envelope: dict[str, Any], result: ProcessResult
) -> HookReply:
    """A process, persistent or http hook's result, decoded by its format."""
    if result.timed_out:
        raise TimeoutError
    return fmt.decode(spec, envelope, result)


#: Failures whose message is the whole story: no exception type to name. By module,
#: and read only from modules already imported: one not imported raised nothing.
_SAYS_WHAT_WENT_WRONG = {
    "hookgate.hooks.runs.pins": "UnpinnedFile", "hookgate.hooks.kinds.http.target": "HttpHookError",
    "hookgate.hooks.kinds.model.run": "CheckerError", "hookgate.hooks.kinds.model.scripted": "ScriptError",
    "hookgate.hooks.kinds.persistent.lines": "ResidentFailure",
}  # fmt: skip


def _says_what_went_wrong(exc: Exception) -> bool:
    return isinstance(exc, BadReply | SpawnError) or any(
        isinstance(exc, getattr(sys.modules[module], name))
        for module, name in _SAYS_WHAT_WENT_WRONG.items()
        if module in sys.modules
    )


def failure(hook: HookSpec, exc: Exception) -> str:
    """What a hook's failure says, in its notice or its block reason."""
    if isinstance(exc, TimeoutError):
        return f"timed out after {hook.timeout:g}s"
    if _says_what_went_wrong(exc):
        return str(exc)
    # A Python hook's own bug: its failure. (A server's hook translates its exceptions
    # into words where it catches them: `neterrors`, `modelcheck.completion_text`.)
    return f"raised {type(exc).__name__}: {exc}" if str(exc) else f"raised {type(exc).__name__}"


def _as_native(reply: HookReply) -> dict[str, Any]:
    """The native reply a `HookReply` stands for, so that it passes the same validation."""
    if reply.permission or reply.stop is not None or reply.go_on:
        raise BadReply("a Python hook cannot set permission, stop or go_on yet: no native "
                       "reply field says them")  # fmt: skip
    fields = {"reason": reply.reason, "context": reply.context, "message": reply.message}
    clash = set(reply.changes) & {"action", *fields}
    if clash:
        raise BadReply(f"HookReply.changes cannot set {', '.join(sorted(clash))}")
    native = {**reply.changes, "action": "block" if reply.block else "allow"}
    native.update((key, value) for key, value in fields.items() if value is not None)
    return native
