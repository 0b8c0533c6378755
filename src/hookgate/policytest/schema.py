"""The JSON Schema (draft 2020-12) of a test file, from the tables `cases.py` reads by.

`cases.load_cases` is the validator that runs (it names file and line); this is the
same rules for editors and other tools.
"""

from __future__ import annotations

from typing import Any

from hookgate.hooks.events import EVENTS
from hookgate.policytest.cases import CASE_EVENTS, DECISIONS, EXPECT_KEYS

_STRING: dict[str, Any] = {"type": "string"}
_PATTERN: dict[str, Any] = {"type": "string", "format": "regex"}
_EXPECT_TYPES: dict[str, dict[str, Any]] = {
    "decision": {"enum": sorted({d for decisions in DECISIONS.values() for d in decisions})},
    "reason": _PATTERN,
    "by": {**_STRING, "description": "the hook's name, 'permission rule', 'permissions' or 'user'"},
    "input": {"type": "object", "description": "the arguments the tool runs with, exactly"},
    "result": _PATTERN,
    "prompt": _PATTERN,
    "context": _PATTERN,
}
_RESULT: dict[str, Any] = {
    "oneOf": [
        _STRING,
        {
            "type": "object",
            "properties": {"content": _STRING, "is_error": {"type": "boolean"}},
            "required": ["content"],
            "additionalProperties": False,
        },
    ]
}


def _event_names(name: str) -> list[str]:
    return [name, *EVENTS[name].aliases]


def _case_for(event: str) -> dict[str, Any]:
    fields: dict[str, Any] = {"tool": _STRING, "arguments": {"type": "object"}}
    required = ["name", "event", "tool"]
    if event == "postToolCall":
        fields["result"] = _RESULT
        required.append("result")
    if event == "preGeneration":
        fields = {"prompt": _STRING}
        required = ["name", "event", "prompt"]
    expect = {key: _EXPECT_TYPES[key] for key in EXPECT_KEYS}
    expect["decision"] = {"enum": list(DECISIONS[event])}
    if event == "preGeneration":
        del expect["input"]
    return {
        "type": "object",
        "properties": {
            "name": _STRING,
            "event": {"enum": _event_names(event)},
            **fields,
            "expect": {"type": "object", "properties": expect, "additionalProperties": False},
        },
        "required": required,
        "additionalProperties": False,
    }


TEST_FILE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "hookgate hooks test file (*.hooktest.yaml)",
    "type": "array",
    "items": {"oneOf": [_case_for(event) for event in CASE_EVENTS]},
}
