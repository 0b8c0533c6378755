"""One event's run: what its hooks' replies add up to, folded into one `Outcome`.

Every event starts allowed; each hook sees the payload as the hooks before it left it;
the first block ends the chain (on events that can block); a hook's failure is what its
`onError` makes of it. `replies.py` turns what a hook answered into the `HookReply`
applied here.
"""

from __future__ import annotations

from hookgate.hooks.config import HookSpec
from hookgate.hooks.events import EventSpec, OnError
from hookgate.hooks.formats import ALLOW, HookReply, Permission
from hookgate.hooks.outcome import HookFailure, Outcome
from hookgate.hooks.wording import OBJECTED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Chain:
    """The state an event's hooks build up as they run."""

    __slots__ = (
        "blocked_by", "changed", "changed_by", "context", "errors", "exit_status", "failed_safe", "go_on",
        "hooks_run", "notices", "payload", "permission", "permission_by", "permission_reason",
        "reason", "response", "spec", "stop_reason",
    )  # fmt: skip

    def __init__(self, spec: EventSpec, payload: dict[str, Any]) -> None:
        self.spec = spec
        self.payload = payload
        self.context: list[str] = []
        self.notices: list[str] = []
        self.errors: list[HookFailure] = []
        self.changed: list[str] = []
        self.changed_by: dict[str, str] = {}
        self.blocked_by: HookSpec | None = None
        self.reason: str | None = None
        self.response: str | None = None
        self.hooks_run = 0
        # A hook under `onError: fail` failed: the hooks after it do not run (they would
        # read a payload it did not make safe, even on an event that cannot block).
        self.failed_safe = False
        self.permission: Permission | None = None
        self.permission_by: str | None = None
        self.permission_reason: str | None = None
        self.stop_reason: str | None = None
        self.go_on: list[str] = []
        #: The last process hook's exit status, for the engine's observer.
        self.exit_status: int | None = None

    def over(self) -> bool:
        return self.blocked_by is not None or self.failed_safe or self.stop_reason is not None

    def outcome(self) -> Outcome:
        if not (self.notices or self.errors or self.context or self.changed or self.go_on
                or self.permission or self.over()):  # fmt: skip
            # Every hook allowed and said nothing, the usual event: nothing to gather.
            return Outcome(self.spec.name, self.payload, hooks_run=self.hooks_run)
        return Outcome(
            event=self.spec.name,
            payload=self.payload,
            blocked=self.blocked_by is not None,
            reason=self.reason,
            blocked_by=self.blocked_by.name if self.blocked_by else None,
            response=self.response,
            context=tuple(self.context),
            notices=tuple(self.notices),
            errors=tuple(self.errors),
            changed=tuple(self.changed),
            changed_by=dict(self.changed_by),
            hooks_run=self.hooks_run,
            permission=self.permission,
            permission_by=self.permission_by,
            permission_reason=self.permission_reason,
            stop_reason=self.stop_reason,
            continue_with="\n\n".join(self.go_on) or None,
        )

    def apply(self, hook: HookSpec, reply: HookReply) -> None:
        """What `hook` answered, applied to the event."""
        if reply is ALLOW:  # the usual answer: it changes nothing
            return
        if reply.block and self.spec.can_block:
            self.response = reply.message  # shown as the answer, not as a notice
        elif reply.message:
            self.notices.append(f"{hook.name}: {reply.message}")
        # Changes apply with a block too: a denied call's replaced arguments are a redaction.
        for key, value in reply.changes.items():
            self.payload[key] = value
            self.changed_by[key] = hook.name  # the last hook to change a field is named
            if key not in self.changed:
                self.changed.append(key)
        if reply.permission == "ask" != self.permission or (
            reply.permission and self.permission is None
        ):  # ask wins over allow, the first of each is named; a block wins over both
            self.permission, self.permission_by = reply.permission, hook.name
            self.permission_reason = reply.reason
        if reply.go_on:
            self.go_on.append(reply.go_on)
        if reply.stop is not None:
            self.stop_reason = reply.stop
            self.notices.append(f"{hook.name} asked to stop: {reply.stop}")
        if reply.block:
            self.block(hook, reply.reason or f"blocked by hook {hook.name!r}")
            if self.spec.can_block:
                return
        if reply.context:
            self.context.append(reply.context)

    def fail(self, hook: HookSpec, message: str) -> None:
        """`hook` failed, saying `message`: its `onError` decides what that means."""
        failure = HookFailure(hook.name, self.spec.name, message, hook.on_error)
        if hook.on_error is OnError.IGNORE:
            return
        self.errors.append(failure)
        if hook.on_error is OnError.WARN:
            self.notices.append(str(failure))
            return
        self.failed_safe = True
        self.block(hook, f"hook {hook.name!r} failed: {message}")

    def block(self, hook: HookSpec, reason: str) -> None:
        if self.spec.can_block:
            self.blocked_by, self.reason = hook, reason
            return
        # Too late to stop anything: the objection annotates the event instead.
        self.notices.append(OBJECTED.format(hook=hook.name, reason=reason))
        self.context.append(reason)
