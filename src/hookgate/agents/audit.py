"""Each session of another agent kept as a hookgate session, one event at a time.

Every hook process of an agent session appends to the same session file, named with
the agent's name and session id (`20261201-130700-claude-<id>`), so `hookgate
sessions` lists it as such, and found through a one-line index entry per agent session
(`$HOOKGATE_HOME/agent-sessions/claude-<id>`). The conversation is kept as hookgate keeps its
own (the question, each call, each result, the answer), with the same secrecy: a
blocked question is kept as its marker only, the file is private. Each event adds an
`agent_hook` record of what the hooks decided. A file that cannot be written is a
notice for the user; the decision stands. `pid` says which process decided (the resident
hookgate answers many events).
"""

from __future__ import annotations

import _thread  # its lock alone: `threading` costs every `hookgate hook` 1 ms more
import os
import re
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

from hookgate.agents.protocol import AgentEvent
from hookgate.errors import SessionError
from hookgate.hooks import Outcome
from hookgate.hooks.wording import BLOCKED_MARKER, DENIED_CALL, STOPPED_CALL
from hookgate.messages import Message, ToolCall
from hookgate.store.session import Session, SessionEvent, SessionStore, id_stamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The record each event adds, besides the messages.
AGENT_HOOK = "agent_hook"
#: Where each agent session's hookgate session id is kept, under `$HOOKGATE_HOME`.
INDEX_DIR = "agent-sessions"
_ID = re.compile(r"[0-9A-Za-z_-]+\Z")
#: Characters of an agent's session id kept in hookgate's (a UUID is 36).
MAX_ID = 80
_NOT_ID = re.compile(r"[^0-9A-Za-z_-]")


def audit_session_id(event: AgentEvent, now: float | None = None) -> str:
    """The hookgate session id of `event`'s agent session, first seen `now` (seconds
    since the epoch; default: now): two clients' sessions of one id started in the same
    second are still two (`_index_name`)."""
    return f"{id_stamp(now)}-{_index_name(event)}"


def open_audit(store: SessionStore, event: AgentEvent, agent_file: str) -> Session:
    """The hookgate session of `event`'s agent session: found by its index entry (one
    small file per agent session, so no event lists the sessions), else started. Under
    `hookgate serve` each client's sessions are its own: another's session id, in any
    spelling, names another session."""
    index = store.home / INDEX_DIR / _index_name(event)
    session_id = _indexed(index, audit_session_id(event))
    # Made by whichever process wrote the index entry; opened where it exists already.
    return store.create(agent_file=agent_file, cwd=event.cwd, session_id=session_id, reuse=True)


class AuditTrail:
    """Where a process records the events it answers: each one's hookgate session,
    looked up afresh (`open_audit`) in `store` (default: `$HOOKGATE_HOME`'s)."""

    def __init__(self, store: SessionStore | None = None) -> None:
        self._store = store

    def session(self, event: AgentEvent, agent_file: str) -> Session:
        """The hookgate session of `event`'s agent session. Raises `SessionError`."""
        return open_audit(self._store or SessionStore(), event, agent_file)

    def record(
        self,
        event: AgentEvent,
        agent_file: str,
        outcome: Outcome | None,
        *,
        refused: str | None = None,
        unchecked: str | None = None,
    ) -> None:
        """`record` in the session of `event`. Raises `SessionError`."""
        try:
            record(self.session(event, agent_file), event, outcome, refused, unchecked)
        except SessionError:
            if not self._forget(event, agent_file):
                raise
            # A kept session's file was removed, say: looked up anew, once.
            record(self.session(event, agent_file), event, outcome, refused, unchecked)

    def _forget(self, event: AgentEvent, agent_file: str) -> bool:
        """Drop what is kept of `event`'s session; whether anything was."""
        return False


class KeptAuditTrail(AuditTrail):
    """An `AuditTrail` for a process that answers event after event (`hookgate serve`):
    the session of each agent session is looked up once and kept, the `MAX_KEPT` used
    last. Each record is still in the file when `record` returns. Safe between threads."""

    #: Agent sessions whose hookgate session is kept.
    MAX_KEPT = 4096

    def __init__(self, store: SessionStore | None = None) -> None:
        super().__init__(store or SessionStore())
        self._kept: OrderedDict[tuple[str, str | None, str, str], Session] = OrderedDict()
        self._lock = _thread.allocate_lock()

    def session(self, event: AgentEvent, agent_file: str) -> Session:
        key = (event.agent, event.client, event.session_id, agent_file)
        with self._lock:
            session = self._kept.get(key)
            if session is not None:
                self._kept.move_to_end(key)
                return session
        session = super().session(event, agent_file)  # the same one, whoever finds it
        with self._lock:
            self._kept[key] = session
            while len(self._kept) > self.MAX_KEPT:
                self._kept.popitem(last=False)
        return session

    def _forget(self, event: AgentEvent, agent_file: str) -> bool:
        with self._lock:
            key = (event.agent, event.client, event.session_id, agent_file)
            return self._kept.pop(key, None) is not None


def _indexed(index: Path, new_id: str) -> str:
    """The session id `index` names; `new_id`, recorded there, where none is yet. The
    entry appears whole (linked from a file written first): a reader never sees it empty."""
    written = index.with_name(f".{index.name}.{os.getpid()}")
    try:
        index.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(written, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(new_id + "\n")
        os.link(written, index)
    except FileExistsError:
        return _named_in(index) or new_id
    except OSError as exc:
        raise SessionError(f"cannot write the audit index {index}: {exc.strerror}") from exc
    finally:
        written.unlink(missing_ok=True)
    return new_id


def _named_in(index: Path) -> str | None:
    try:
        named = index.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SessionError(f"cannot read the audit index {index}: {exc}") from exc
    return named if _ID.match(named) else None


def record(
    session: Session,
    event: AgentEvent,
    outcome: Outcome | None,
    refused: str | None = None,
    unchecked: str | None = None,
) -> None:
    """Append `event`'s messages and what the hooks decided. Without an `outcome`
    hookgate could not decide: it blocked for the reason `refused`, or let the event
    through unchecked for the reason `unchecked`. Raises `SessionError`."""
    decision = SessionEvent(AGENT_HOOK, _decision(event, outcome, refused, unchecked))
    session.append_entries([*_messages(event, outcome, refused), decision])


def last_question(session: Session) -> str:
    """The session's latest question, for the end-of-turn event (agents do not send it)."""
    try:
        questions = [m.content for m in session.messages() if m.role == "user"]
    except SessionError:
        return ""
    return questions[-1] if questions else ""


def _messages(event: AgentEvent, outcome: Outcome | None, refused: str | None) -> list[Message]:
    payload = outcome.payload if outcome is not None else event.payload
    blocked = refused or (outcome.reason or "blocked" if outcome and outcome.blocked else None)
    if event.event == "preGeneration":
        halted = refused or (
            outcome.halt_reason or "blocked" if outcome and outcome.halted else None
        )
        text = BLOCKED_MARKER.format(reason=halted) if halted else str(payload.get("prompt", ""))
        return [Message("user", text)]
    if event.event == "preToolCall":
        call = ToolCall(str(payload.get("call_id", "")), str(payload.get("tool", "")),
                        dict(payload.get("arguments") or {}))  # fmt: skip
        messages = [Message("assistant", "", (call,))]
        if outcome is not None and outcome.stop_reason is not None:
            messages.append(_result(call.id, STOPPED_CALL.format(reason=outcome.stop_reason)))
        elif blocked:
            messages.append(_result(call.id, DENIED_CALL.format(reason=blocked)))
        return messages
    if event.event == "postToolCall":
        result = payload.get("result") or {}
        content = result.get("content", "") if isinstance(result, Mapping) else result
        return [_result(str(payload.get("call_id", "")), str(content))]
    if event.event == "postGeneration" and payload.get("answer"):
        return [Message("assistant", str(payload["answer"]))]
    return []


def _result(call_id: str, content: str) -> Message:
    return Message("tool", content, tool_call_id=call_id)


def _decision(
    event: AgentEvent, outcome: Outcome | None, refused: str | None, unchecked: str | None
) -> dict[str, Any]:
    data: dict[str, Any] = {"agent": event.agent, "agent_session": event.session_id,
                            "event": event.native, "hookgate_event": event.event,
                            "pid": os.getpid()}  # fmt: skip
    if event.client is not None:
        data["client"] = event.client
    if "tool" in event.payload:
        data["tool"] = event.payload["tool"]
    if outcome is None:
        if refused is not None:
            return {**data, "decision": "refused", "reason": refused}
        return {**data, "decision": "unchecked", "reason": unchecked}
    decision = "blocked" if outcome.blocked else "stopped" if outcome.halted else "allowed"
    return {
        **data,
        "decision": decision,
        "reason": outcome.halt_reason,
        "blocked_by": outcome.blocked_by,
        "changed": list(outcome.changed),
        "permission": outcome.permission,
        "continue_with": outcome.continue_with,
        "hooks_run": outcome.hooks_run,
        "notices": list(outcome.notices),
    }


def _id_part(session_id: str) -> str:
    return _NOT_ID.sub("_", session_id)[:MAX_ID] or "unnamed"


def _index_name(event: AgentEvent) -> str:
    """The agent session's index entry: its agent, its client (under `hookgate serve`)
    and its id, readable where they are safe names; else with a digest of them, so that
    two that fold to the same characters (`bob.sess`, `bob_sess`) stay two."""
    named = [event.agent, *([] if event.client is None else [event.client]), event.session_id]
    name = "-".join(_id_part(part) for part in named)
    if any(part != _id_part(part) for part in named):
        import hashlib  # only for an id that is no safe name

        digest = hashlib.sha256("\0".join(named).encode("utf-8", "surrogatepass")).hexdigest()
        name += f"-{digest[:16]}"
    return name
