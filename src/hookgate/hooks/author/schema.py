"""JSON Schemas (draft 2020-12) of every event's payload and reply, in both formats.

Generated from the event table `EVENTS` and one table of field types, never written
per event; the copies shipped in `schemas/` are `all_schemas()` written to disk by
`scripts/gen_schemas.py`, and a test keeps the two equal.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Literal

from hookgate.hooks.errors import ConfigError
from hookgate.hooks.events import EVENT_NAMES, EVENTS, EventSpec
from hookgate.hooks.files.yamlfile import did_you_mean
from hookgate.hooks.formats import FORMATS
from hookgate.hooks.formats.claude import PERMISSION_MODES, SPECIFIC_OUTPUT, claude_event_name
from hookgate.hooks.formats.native import ACTIONS

Kind = Literal["payload", "reply"]
KINDS: tuple[Kind, ...] = ("payload", "reply")
DRAFT = "https://json-schema.org/draft/2020-12/schema"

_STRING: dict[str, Any] = {"type": "string"}
_OPTIONAL_STRING: dict[str, Any] = {"type": ["string", "null"]}
_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {"content": _STRING, "is_error": {"type": "boolean"}},
    "required": ["content", "is_error"],
    "additionalProperties": False,
}

#: The JSON type of every payload field an event can carry.
FIELD_SCHEMAS: Mapping[str, dict[str, Any]] = {
    "prompt": _STRING,
    "question": _STRING,
    "answer": _STRING,
    "arguments": {"type": "object"},
    "result": _RESULT,
    "conversation": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"role": _STRING, "content": _STRING},
            "required": ["role", "content"],
            "additionalProperties": False,
        },
    },
    "tool": _STRING,
    "call_id": _STRING,
    "agent": _STRING,
    "error": _OPTIONAL_STRING,
    "outcome": {"enum": ["answered", "blocked", "error", "cancelled", "aborted"]},
    "source": _STRING,
    "trigger": {"enum": ["auto", "manual"]},
    "custom_instructions": _STRING,
    "message": _STRING,
    "notification_type": _STRING,
    "team": _STRING,
    "task": {
        "type": "object",
        "properties": {"id": _STRING, "subject": _STRING, "description": _STRING},
        "required": ["id", "subject", "description"],
        "additionalProperties": False,
    },
    "continued": {"type": "boolean"},
}

#: Where a native reply accepts more than the payload carries: a replacement result
#: may be the bare text, and `is_error` then keeps its value (see formats/native.py).
_NATIVE_REPLY_FIELDS: Mapping[str, dict[str, Any]] = {
    "result": {
        "anyOf": [
            _STRING,
            {**_RESULT, "required": ["content"]},
        ]
    },
}

_ASKED: dict[str, Any] = {
    "type": "object",
    "properties": {"depth": {"type": "integer", "minimum": 1}, "agent": _STRING},
    "required": ["depth"],
    "additionalProperties": False,
}

_PERMISSION_MODE: dict[str, Any] = {"enum": list(PERMISSION_MODES)}

#: The field each mutable `mecatl` phase's `Input` stands for (formats/mecatl.py).
_MECATL_INPUT = {"PreToolUse": "arguments", "PostToolUse": "result", "UserPromptSubmit": "prompt"}


def schema_for(event: str, fmt: str, kind: Kind) -> dict[str, Any]:
    """The schema of what `event` writes to a hook (`payload`) or reads back (`reply`).

    `event` takes either spelling. Raises `ConfigError` for an unknown event, format
    or kind, and for a format that has no counterpart of the event.
    """
    spec = _event(event)
    if fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r}", hint=did_you_mean(fmt, FORMATS))
    if kind not in KINDS:
        raise ConfigError(f"unknown schema kind {kind!r}", hint="payload or reply")
    if not FORMATS[fmt].supports(spec):
        raise ConfigError(f"format {fmt!r} has no counterpart of event {spec.name!r}")
    build = _BUILDERS[fmt, kind]
    body = build(spec)
    document: dict[str, Any] = {
        "$schema": DRAFT,
        "title": f"{spec.name} {kind} ({fmt} format)",
        "description": f"{_KIND_TEXT[kind]} {spec.fires}.",
    }
    document.update(body)
    return copy.deepcopy(document)  # callers may edit theirs; the tables stay intact


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every schema, keyed by the file it ships as: `preToolCall.native.payload.json`."""
    return {
        schema_file(spec.name, fmt, kind): schema_for(spec.name, fmt, kind)
        for spec in EVENTS.values()
        for fmt, reply_format in FORMATS.items()
        if reply_format.supports(spec)
        for kind in KINDS
    }


def schema_file(event: str, fmt: str, kind: Kind) -> str:
    """The file name a schema ships under."""
    return f"{event}.{fmt}.{kind}.json"


_KIND_TEXT = {
    "payload": "What a hook reads on stdin",
    "reply": "What a hook may answer on stdout",
}


def _event(name: str) -> EventSpec:
    canonical = EVENT_NAMES.get(name)
    if canonical is None:
        raise ConfigError(f"unknown event {name!r}", hint=did_you_mean(name, EVENT_NAMES))
    return EVENTS[canonical]


def _native_payload(spec: EventSpec) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "event": {"const": spec.name},
        "session_id": _STRING,
        "cwd": _STRING,
        "transcript_path": _STRING,
        "permission_mode": _PERMISSION_MODE,
        "asked": _ASKED,
    }
    properties.update({name: FIELD_SCHEMAS[name] for name in spec.payload})
    return {
        "type": "object",
        "properties": properties,
        "required": ["event", "session_id", "cwd", *spec.payload],
        "additionalProperties": False,
    }


def _native_reply(spec: EventSpec) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "action": {"enum": list(ACTIONS)},
        "reason": _OPTIONAL_STRING,
        "message": _OPTIONAL_STRING,
    }
    if spec.can_add_context:
        properties["context"] = _OPTIONAL_STRING
    properties.update(
        {name: _NATIVE_REPLY_FIELDS.get(name, FIELD_SCHEMAS[name]) for name in spec.mutable}
    )
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _mecatl_input(spec: EventSpec) -> dict[str, Any]:
    target = _MECATL_INPUT.get(spec.mecatl_phase or "")
    if target == "prompt":
        return {
            "type": "object",
            "properties": {"prompt": _STRING},
            "required": ["prompt"],
            "additionalProperties": False,
        }
    if target is not None:
        return FIELD_SCHEMAS[target]
    fields = [name for name in spec.payload if name != "tool"]  # `Tool` carries it
    return {
        "type": "object",
        "properties": {name: FIELD_SCHEMAS[name] for name in fields},
        "required": fields,
        "additionalProperties": False,
    }


def _mecatl_payload(spec: EventSpec) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "Phase": {"const": spec.mecatl_phase},
            "Tool": _STRING,
            "Input": _mecatl_input(spec),
            "SessionID": _STRING,
        },
        "required": ["Phase", "Tool", "Input", "SessionID"],
        "additionalProperties": False,
    }


def _mecatl_reply(spec: EventSpec) -> dict[str, Any]:
    # Stdout that is not a JSON object is a plain message; this is the envelope.
    mutable = spec.mecatl_phase in _MECATL_INPUT
    return {
        "type": "object",
        "properties": {
            "mutated": _mecatl_input(spec) if mutable else False,
            "message": _OPTIONAL_STRING,
        },
    }


def _claude_payload(spec: EventSpec) -> dict[str, Any]:
    name = claude_event_name(spec)
    properties: dict[str, Any] = {
        "session_id": _STRING,
        "transcript_path": _STRING,
        "cwd": _STRING,
        "hook_event_name": {"const": name},
        "permission_mode": _PERMISSION_MODE,
    }
    for field_name in _CLAUDE_FIELDS.get(name or "", ()):
        properties[field_name] = _CLAUDE_TYPES.get(field_name, _STRING)
    required = list(properties)
    # Inside an asked agent every event names it, as inside Claude's subagent.
    properties.setdefault("agent_id", _STRING)
    properties.setdefault("agent_type", _STRING)
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _claude_reply(spec: EventSpec) -> dict[str, Any]:
    name = claude_event_name(spec) or ""
    specific: dict[str, Any] = {"hookEventName": {"const": name}}
    for key in SPECIFIC_OUTPUT.get(name, ()):
        specific[key] = _CLAUDE_TYPES.get(key, _STRING)
    return {
        "type": "object",
        "properties": {
            "continue": {"type": "boolean"},
            "stopReason": _STRING,
            "suppressOutput": {"type": "boolean"},
            "systemMessage": _STRING,
            "decision": {"enum": ["approve", "block"]},
            "reason": _STRING,
            "hookSpecificOutput": {
                "type": "object",
                "properties": specific,
                "additionalProperties": False,
            },
        },
    }


#: The fields Claude Code's input carries per event, besides the common ones.
_CLAUDE_FIELDS: Mapping[str, tuple[str, ...]] = {
    "SessionStart": ("source",),
    "PreCompact": ("trigger", "custom_instructions"),
    "Notification": ("message", "notification_type"),
    "UserPromptSubmit": ("prompt",),
    "PreToolUse": ("tool_name", "tool_input", "tool_use_id"),
    "PostToolUse": ("tool_name", "tool_input", "tool_response", "tool_use_id"),
    "Stop": ("stop_hook_active", "last_assistant_message"),
    "SubagentStart": ("agent_id", "agent_type"),
    "SubagentStop": ("agent_id", "agent_type", "stop_hook_active", "last_assistant_message"),
    "TeammateIdle": ("teammate_name", "team_name"),
    "TaskCreated": ("task_id", "task_subject", "task_description", "teammate_name", "team_name"),
    "TaskCompleted": ("task_id", "task_subject", "task_description", "teammate_name",
                      "team_name"),
}  # fmt: skip
_CLAUDE_TYPES: Mapping[str, dict[str, Any]] = {
    "tool_input": {"type": "object"},
    "tool_response": {},
    "stop_hook_active": {"type": "boolean"},
    "trigger": {"enum": ["auto", "manual"]},
    "permissionDecision": {"enum": ["allow", "deny", "ask", "defer"]},
    "updatedInput": {"type": "object"},
    "updatedToolOutput": {},
    "updatedMCPToolOutput": {},
}

_BUILDERS = {
    ("claude", "payload"): _claude_payload,
    ("claude", "reply"): _claude_reply,
    ("native", "payload"): _native_payload,
    ("native", "reply"): _native_reply,
    ("mecatl", "payload"): _mecatl_payload,
    ("mecatl", "reply"): _mecatl_reply,
}
