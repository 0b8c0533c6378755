"""What an event's hooks decided, all of them considered: an `Outcome`, and each
`HookFailure` (a hook that gave no usable answer) with the `onError` that applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from hookgate.hooks.events import OnError
from hookgate.hooks.formats import Permission
from hookgate.hooks.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: How many times in a row hooks may send an agent on (`continue_with`) before its
#: end stands, as Claude Code bounds Stop and SubagentStop blocks.
MAX_CONTINUES = 8


class HookFailure(NamedTuple):
    """A hook that could not give a usable answer, and why."""

    hook: str
    event: str
    message: str
    on_error: OnError

    def __str__(self) -> str:
        return f"hook {self.hook!r} ({self.event}) failed: {self.message}"


class Outcome(NamedTuple):
    """The decision for one event, all its hooks considered."""

    event: str
    payload: Mapping[str, Any]
    """The event's fields after every change the hooks made."""
    blocked: bool = False
    reason: str | None = None
    blocked_by: str | None = None
    response: str | None = None
    """The blocking hook's message, meant as the answer to a blocked event."""
    context: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    """Lines for the user: hook messages, failures under `warn`, annotations."""
    errors: tuple[HookFailure, ...] = ()
    changed: tuple[str, ...] = ()
    """Names of the payload fields some hook replaced."""
    changed_by: Mapping[str, str] = MappingProxyType({})
    """For each replaced field, the name of the last hook that replaced it."""
    hooks_run: int = 0
    permission: Permission | None = None
    """A tool call's hooks said `allow` (no consent prompt) or `ask` (one, always)."""
    permission_by: str | None = None
    """The hook whose `permission` stands: the first to ask, else the first to allow."""
    permission_reason: str | None = None
    """That hook's reason, for the user (Claude's `permissionDecisionReason`)."""
    stop_reason: str | None = None
    """Set: a hook stopped the whole turn, for this reason."""
    continue_with: str | None = None
    """Set at the end of a turn: hooks asked the agent to go on with this instruction."""

    @property
    def allowed(self) -> bool:
        return not self.blocked

    @property
    def halted(self) -> bool:
        """What the event was about does not go ahead: a hook blocked it, or stopped the
        whole turn (a stopped turn sends no question and runs no call either)."""
        return self.blocked or self.stop_reason is not None

    @property
    def halt_reason(self) -> str | None:
        """Why it was `halted`: the block's reason, else the stop's."""
        return self.reason or self.stop_reason
