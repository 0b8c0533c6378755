"""`hookgate hook AGENT`: one event of another agent, through the agent file's hooks.

Reads the agent's event JSON, maps it (`AgentProtocol.parse`), checks the agent file's
trust, runs the matching hooks with hookgate's engine and answers in the agent's own
protocol, the file's `permissions: deny` rules judging each call after them. When
hookgate cannot decide (the file is untrusted, changed, broken, or
hookgate itself fails) the event is refused, with the reason, if a hook of it that
would have run says `onError: fail` (or the file cannot be read to know); otherwise the
user gets a notice and the agent goes on. Each event lands in the audit trail.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path

from hookgate.agents.protocol import AgentEvent, AgentProtocol, Reply
from hookgate.hooks import ConfigError, HookEngine, HookgateError, HooksConfig, OnError, Outcome
from hookgate.hooks.formats import FORMATS
from hookgate.hooks.process import programs_path
from hookgate.hooks.records import NamedTuple
from hookgate.telemetry import observer_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from hookgate.agents.audit import AuditTrail
    from hookgate.config.agentfile import AgentConfig
    from hookgate.hooks.kinds.persistent.run import PersistentHooks
    from hookgate.hooks.runs.pins import SessionPins
    from hookgate.security.trust.check import TrustedAgent
else:  # a structural type for the checker; at run time, a class like any other
    Protocol = object

DEFAULT_AGENT_FILE = "hookgate.yaml"


def read_event(
    protocol: AgentProtocol, text: str, environ: Mapping[str, str]
) -> AgentEvent | Reply:
    """The agent's event in `text`; or, where there is none to decide, the reply: an
    error for one that cannot be read, nothing for an event hookgate does not answer."""
    try:
        given = json.loads(text)
        event = protocol.parse(given, environ) if isinstance(given, dict) else None
    except (ValueError, TypeError, KeyError) as exc:
        return Reply(
            stderr=f"hookgate: cannot read the {protocol.name} event: {exc}\n", exit_code=1
        )
    return Reply() if event is None else event


class Loaded(NamedTuple):
    """A trusted agent file, parsed, and what a long-lived caller keeps of its hooks."""

    config: AgentConfig
    trusted: TrustedAgent
    pins: SessionPins | None = None
    """The closure's pins with what they verified (else made from `trusted` per event)."""
    persistent: PersistentHooks | None = None
    """The persistent hooks' processes, kept and stopped by the caller (else the event's)."""


class Keeper(Protocol):
    """What a process that answers event after event keeps between them (`hookgate serve`):
    the agent file, checked and parsed, for the length of one event (`loaded`: raises
    `HookgateError` as `load_trusted` does), and where events are recorded (`audit`)."""

    audit: AuditTrail

    def loaded(self, path: Path) -> AbstractContextManager[Loaded]: ...


def run_agent_hook(
    protocol: AgentProtocol,
    text: str,
    *,
    agent_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    keeper: Keeper | None = None,
    local: bool = True,
) -> Reply:
    """The reply to the agent event `text` (its stdin). `agent_file` defaults to
    `hookgate.yaml` in the agent's project directory. Never raises for a bad event or
    file: the agent always gets an answer it reads. Without a `keeper`, the file is
    checked and parsed afresh and the hooks' processes end with the event. `local`:
    the event's project is on this machine, its agent's model writes there, and no
    hook finds a program there by name (`hookgate serve` answers for others')."""
    environ = os.environ if environ is None else environ
    event = read_event(protocol, text, environ)
    if isinstance(event, Reply):
        return event
    if local and "PATH" in environ:
        environ = {**environ, "PATH": programs_path(environ["PATH"], event.project_dir)}
    path = agent_file or Path(event.project_dir) / DEFAULT_AGENT_FILE
    if agent_file is None and not path.exists():
        return Reply()  # no hookgate.yaml in this project: no policy to apply
    if keeper is not None:
        trail = keeper.audit
    else:
        from hookgate.agents.audit import AuditTrail

        trail = AuditTrail()
    with contextlib.ExitStack() as stack:
        try:
            loaded = stack.enter_context(keeper.loaded(path)) if keeper else _load_fresh(path)
        except HookgateError as exc:
            return _undecided(protocol, event, path, str(exc), trail)
        return _decided(protocol, event, loaded, environ, trail)


def _load_fresh(path: Path) -> Loaded:
    from hookgate.security.trust.check import load_trusted

    return Loaded(*load_trusted(path))


def _decided(
    protocol: AgentProtocol,
    event: AgentEvent,
    loaded: Loaded,
    environ: Mapping[str, str],
    trail: AuditTrail,
) -> Reply:
    """The hooks' answer to `event` under the checked agent file, recorded in `trail`."""
    config, path = loaded.config, loaded.trusted.path
    engine = HookEngine(
        config.hooks, session_id=event.session_id, project_dir=event.project_dir,
        pinned=loaded.trusted.pins() if loaded.pins is None else None, pins=loaded.pins,
        persistent=loaded.persistent, transcript_path=event.transcript_path,
        environ=environ, permission_mode=event.permission_mode,
        observer=observer_for(config.telemetry, environ),
    )  # fmt: skip
    try:
        if event.event == "postGeneration" and not event.payload.get("prompt"):
            event = _with_question(event, str(config.path), trail)
        outcome = engine.run_sync(event.event, event.payload)
        if event.event == "preToolCall" and config.permissions.deny:
            outcome = _judged_by_deny_rules(config, event, outcome)
    except Exception as exc:  # hookgate's own failure, not a hook's: it cannot decide
        why = f"hookgate failed: {exc!r}"
        return _undecided(protocol, event, path, why, trail, config.hooks)
    finally:
        engine.close()
    _audit(trail, event, str(config.path), outcome)
    return protocol.reply(event, outcome)


def _judged_by_deny_rules(config: AgentConfig, event: AgentEvent, outcome: Outcome) -> Outcome:
    """`outcome`, or a denial where a `permissions: deny` rule names the call, judged on
    the model's own arguments after the hooks, as hookgate's own sessions judge it. Allow
    rules are left to the agent's own permissions."""
    if outcome.halted:
        return outcome
    from hookgate.security.policy import Policy, Verdict

    policy = Policy(deny=config.permissions.deny, project_dir=Path(event.project_dir))
    tool, arguments = str(event.payload["tool"]), event.payload["arguments"]
    decision = policy.judge(tool, arguments, needs_consent=False)
    if decision.verdict is not Verdict.DENY:
        return outcome
    why = f": {decision.reason}" if decision.reason else ""  # what it could not read
    reason = f"the permission rule {decision.rule!r} of {config.path} denies it{why}"
    return outcome._replace(blocked=True, reason=reason, blocked_by="permission rule")


def _undecided(
    protocol: AgentProtocol,
    event: AgentEvent,
    path: Path,
    why: str,
    trail: AuditTrail,
    hooks: HooksConfig | None = None,
) -> Reply:
    """Refuse where a guard of `event` must not fail open, else a notice."""
    if hooks is None:
        hooks = _hooks_unchecked(path)
    if hooks is None or _guarded(hooks, event):
        reason = f"hookgate cannot decide, and a hook of {event.event} must not fail open: {why}"
        _audit(trail, event, str(path), None, refused=reason)
        return protocol.refuse(event, reason)
    _audit(trail, event, str(path), None, unchecked=why)
    return protocol.notice(event, f"hookgate: no hooks ran on {event.native}: {why}")


def _hooks_unchecked(path: Path) -> HooksConfig | None:
    """The file's hooks, parsed without trusting, running or importing anything; None
    where it cannot be read (then any of its hooks might be a guard)."""
    from hookgate.config.agentfile import load_agent_file

    try:
        return load_agent_file(path, import_hooks=False).hooks
    except (ConfigError, OSError):
        return None


def _guarded(hooks: HooksConfig, event: AgentEvent) -> bool:
    """Whether a hook that would run on `event` fails closed."""
    target = event.payload.get("tool")
    for hook in hooks.for_event(event.event):
        name = None if target is None else FORMATS[hook.format].match_name(str(target))
        if hook.on_error is OnError.FAIL and hook.matches(name):
            return True
    return False


def _with_question(event: AgentEvent, agent_file: str, trail: AuditTrail) -> AgentEvent:
    """The end-of-turn event with the turn's question, which agents do not send."""
    from hookgate.agents.audit import last_question

    try:
        question = last_question(trail.session(event, agent_file))
    except HookgateError:
        question = ""
    return event._replace(payload={**event.payload, "prompt": question})


def _audit(
    trail: AuditTrail,
    event: AgentEvent,
    agent_file: str,
    outcome: Outcome | None,
    *,
    refused: str | None = None,
    unchecked: str | None = None,
) -> None:
    try:
        trail.record(event, agent_file, outcome, refused=refused, unchecked=unchecked)
    except HookgateError as exc:
        print(f"hookgate: the audit trail missed {event.native}: {exc}", file=sys.stderr)
