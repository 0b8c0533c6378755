"""The events hooks can be attached to, as one declarative table.

The runner, the config validator, the docs and the schema command all read `EVENTS`:
what each event carries, whether a hook can block it, which fields it may change.
Canonical names are lowerCamelCase; each event also answers to the other spelling.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from hookgate.hooks.records import NamedTuple


class OnError(StrEnum):
    """What a hook's failure (crash, timeout, bad reply) does to the event."""

    WARN = "warn"  # a notice, and the chain goes on
    FAIL = "fail"  # treated as a block whose reason says the hook failed
    IGNORE = "ignore"  # nothing at all


class MatchOn(StrEnum):
    """What a hook's `matcher` regex is tested against."""

    NOTHING = "nothing"
    TOOL = "tool"
    AGENT = "agent"
    # The payload field of that name, as Claude Code matches it:
    SOURCE = "source"  # how the session started: startup, resume, clear, compact
    TRIGGER = "trigger"  # what started a compaction: auto, manual
    NOTIFICATION_TYPE = "notification_type"  # permission_prompt, ...


class EventSpec(NamedTuple):
    """One row of the event table."""

    name: str
    aliases: tuple[str, ...]
    fires: str
    can_block: bool
    blocked_means: str
    mutable: tuple[str, ...]
    """Payload fields a hook may replace."""
    can_add_context: bool
    match_on: MatchOn
    fail_safe: bool
    """An execution error ends the run unless the hook sets `onError` itself."""
    payload: tuple[str, ...]
    """Fields of the payload hooks receive (besides the common ones)."""
    mecatl_phase: str | None
    """The phase name of the `mecatl` format, None where that format has no such phase."""

    @property
    def default_on_error(self) -> OnError:
        return OnError.FAIL if self.fail_safe else OnError.WARN


def _event(
    name: str,
    alias: str | None,
    fires: str,
    *,
    blocked_means: str = "",
    mutable: tuple[str, ...] = (),
    context: bool = False,
    match_on: MatchOn = MatchOn.NOTHING,
    fail_safe: bool = False,
    payload: tuple[str, ...] = (),
    mecatl: bool = True,
) -> EventSpec:
    return EventSpec(
        name=name,
        aliases=(alias,) if alias else (),
        fires=fires,
        can_block=bool(blocked_means),
        blocked_means=blocked_means,
        mutable=mutable,
        can_add_context=context,
        match_on=match_on,
        fail_safe=fail_safe,
        payload=payload,
        mecatl_phase=alias if mecatl and alias else None,
    )


EVENTS: Mapping[str, EventSpec] = {
    spec.name: spec
    for spec in (
        _event(
            "sessionStart", "SessionStart", "once when a session starts",
            blocked_means="the run is aborted", fail_safe=True, payload=("source",),
            match_on=MatchOn.SOURCE,
        ),
        _event(
            "preGeneration", "UserPromptSubmit",
            "on the question, before the first model call",
            blocked_means="the turn ends; the question is replaced by a marker",
            mutable=("prompt",), context=True, fail_safe=True, payload=("prompt",),
        ),
        _event(
            "preToolCall", "PreToolUse", "before each tool call, before its consent prompt",
            blocked_means="the call is denied; the tool does not run",
            mutable=("arguments",), context=True, match_on=MatchOn.TOOL,
            payload=("tool", "call_id", "arguments"),
        ),
        _event(
            "postToolCall", "PostToolUse", "after each tool call",
            mutable=("result",), match_on=MatchOn.TOOL,
            payload=("tool", "call_id", "arguments", "result"),
        ),
        _event(
            "postGeneration", "Stop", "once the turn is over, whatever its outcome",
            payload=("prompt", "answer", "outcome", "continued"),
        ),
        _event(
            "preCompact", "PreCompact", "before older turns are summarised (compaction)",
            blocked_means="this compaction is skipped; the turn goes on uncompacted",
            payload=("trigger", "custom_instructions"), mecatl=False, match_on=MatchOn.TRIGGER,
        ),
        _event(
            "notification", "Notification",
            "when hookgate waits for the user: a consent prompt, an approve-once question",
            payload=("message", "notification_type"), mecatl=False,
            match_on=MatchOn.NOTIFICATION_TYPE,
        ),
        _event(
            "preAsk", None, "before a hand-off to another agent",
            blocked_means="the hand-off is refused",
            mutable=("question", "conversation"), match_on=MatchOn.AGENT,
            payload=("agent", "question", "conversation"),
        ),
        _event(
            "postAsk", None, "after a hand-off to another agent",
            mutable=("answer",), context=True, match_on=MatchOn.AGENT,
            payload=("agent", "question", "answer", "error"),
        ),
        _event(
            "subagentStart", "SubagentStart", "when a child agent starts",
            match_on=MatchOn.AGENT, payload=("agent",),
        ),
        _event(
            "subagentStop", "SubagentStop", "when a child agent's run stops",
            match_on=MatchOn.AGENT, payload=("agent", "answer", "error", "continued"),
        ),
        _event(
            "teammateIdle", "TeammateIdle",
            "when a team member has nothing left to do in the round",
            blocked_means="the member gets the reason as its next task",
            match_on=MatchOn.AGENT, payload=("team", "agent"),
        ),
        _event(
            "taskCreated", "TaskCreated", "when the team's supervisor creates a task",
            blocked_means="the task is refused; the supervisor reads the reason",
            match_on=MatchOn.AGENT, payload=("team", "agent", "task"),
        ),
        _event(
            "taskCompleted", "TaskCompleted", "when a team member finishes a task",
            blocked_means="the member goes back to the task, the reason as feedback",
            match_on=MatchOn.AGENT, payload=("team", "agent", "task", "answer", "error"),
        ),
    )
}  # fmt: skip

#: Every accepted spelling, canonical or alias, to its canonical name.
EVENT_NAMES: Mapping[str, str] = {
    spelling: spec.name for spec in EVENTS.values() for spelling in (spec.name, *spec.aliases)
}

#: Fields every payload carries, whatever the event.
COMMON_FIELDS = ("event", "session_id", "cwd", "asked")


def canonical_event(name: str) -> EventSpec | None:
    """The event `name` spells, in either spelling, or None."""
    canonical = EVENT_NAMES.get(name)
    return EVENTS[canonical] if canonical else None
