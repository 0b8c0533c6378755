"""hookgate's own hook protocol as an `AgentProtocol`, for `POST /v1/hook`.

The request body is what a hookgate `http:` hook POSTs (the bytes a process hook reads
on stdin: the envelope and the event's fields); the reply is the native reply object
the hook reads back (`hooks.formats.native`), so a hook pointed at the service gets the
decision the service's agent file makes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hookgate.agents.protocol import AgentEvent, Reply
from hookgate.hooks import EVENTS, Outcome
from hookgate.hooks.events import EVENT_NAMES

#: Fields of the engine's envelope, not of the event: the service's engine sets its own.
ENVELOPE = ("event", "session_id", "cwd", "transcript_path", "permission_mode", "asked")


class HookgateNative:
    """hookgate's native hook protocol (an `AgentProtocol`)."""

    name = "hookgate"
    title = "hookgate"
    project_env = "HOOKGATE_PROJECT_DIR"

    def parse(self, given: Mapping[str, Any], environ: Mapping[str, str]) -> AgentEvent | None:
        event = EVENT_NAMES.get(str(given.get("event", "")))
        if event is None:
            raise ValueError(f"unknown event {given.get('event')!r}")
        cwd = str(given.get("cwd") or ".")
        payload = {key: value for key, value in given.items() if key not in ENVELOPE}
        missing = [key for key in EVENTS[event].payload if key not in payload]
        if missing:
            raise ValueError(f"{event} needs {', '.join(missing)}")
        return AgentEvent(
            agent=self.name, native=event, event=event, payload=payload,
            session_id=str(given.get("session_id") or "unnamed"), cwd=cwd, project_dir=cwd,
            given=given, transcript_path=_text(given.get("transcript_path")),
            permission_mode=_text(given.get("permission_mode")),
        )  # fmt: skip

    def reply(self, event: AgentEvent, outcome: Outcome) -> Reply:
        if outcome.halted:
            reason = outcome.halt_reason or "blocked by a hook"
            return self.refuse(event, reason)
        spec = EVENTS[event.event]
        answer: dict[str, Any] = {  # a field a hook set to what it was is no change
            key: outcome.payload[key]
            for key in outcome.changed
            if key in spec.mutable and outcome.payload[key] != event.payload.get(key)
        }
        if outcome.context and spec.can_add_context:
            answer["context"] = "\n".join(outcome.context)
        if outcome.notices:
            answer["message"] = "\n".join(outcome.notices)
        return _json(answer)

    def refuse(self, event: AgentEvent, reason: str) -> Reply:
        action = "deny" if event.event == "preToolCall" else "block"
        return _json({"action": action, "reason": reason})

    def notice(self, event: AgentEvent, text: str) -> Reply:
        return _json({"message": text})


def _json(answer: dict[str, Any]) -> Reply:
    return Reply(stdout=json.dumps(answer, ensure_ascii=False) if answer else "")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


PROTOCOL = HookgateNative
