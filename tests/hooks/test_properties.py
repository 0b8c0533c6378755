"""Property tests: no reply bytes and no config text can crash the engine.

A hook's answer is read into a `HookReply` or refused with `BadReply`, never anything
else; a config is a `HooksConfig` or a `ConfigError`. And the shipped JSON Schemas
accept exactly the replies the engine accepts.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hookgate.hooks import EVENTS, FORMATS, BadReply, ConfigError, HookReply, ProcessResult
from hookgate.hooks.author.schema import schema_for
from hookgate.hooks.config import HOOK_KEYS, parse_duration, parse_hook, parse_hooks
from hookgate.hooks.events import EVENT_NAMES, EventSpec
from hookgate.hooks.files.yamlfile import Where, expect_mapping, parse_yaml
from hookgate.hooks.formats.claude import reply_from_claude
from hookgate.hooks.formats.mecatl import ANNOTATE_ONLY
from hookgate.hooks.formats.native import ACTIONS

settings.register_profile(
    "hookgate", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("hookgate")

BASE_DIR = Path(__file__).parent
#: Each event's fields, so that a reply has something to be measured against.
PAYLOADS: dict[str, dict[str, Any]] = {
    "tool": {"tool": "shell"},
    "call_id": {"call_id": "call_1"},
    "arguments": {"arguments": {"command": "ls"}},
    "result": {"result": {"content": "out", "is_error": False}},
    "prompt": {"prompt": "q"},
    "question": {"question": "q"},
    "answer": {"answer": "a"},
    "conversation": {"conversation": [{"role": "user", "content": "hi"}]},
    "agent": {"agent": "reviewer"},
    "error": {"error": None},
    "outcome": {"outcome": "answered"},
    "source": {"source": "startup"},
    "trigger": {"trigger": "auto"},
    "custom_instructions": {"custom_instructions": ""},
    "message": {"message": "hookgate needs your permission to use shell"},
    "notification_type": {"notification_type": "permission_prompt"},
    "team": {"team": "release"},
    "task": {"task": {"id": "1", "subject": "s", "description": "d"}},
    "continued": {"continued": False},
}

events = st.sampled_from(list(EVENTS.values()))
mecatl_events = st.sampled_from([spec for spec in EVENTS.values() if spec.mecatl_phase])
text = st.text(max_size=20)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
#: What YAML can hand the config validator: JSON's values and then some.
yaml_values = st.recursive(
    scalars
    | st.floats()
    | st.integers(min_value=10**300, max_value=10**400)
    | st.binary(max_size=8)
    | st.datetimes(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(text | st.integers(), inner, max_size=3)
    ),
    max_leaves=8,
)


def payload_for(spec: EventSpec) -> dict[str, Any]:
    payload: dict[str, Any] = {"event": spec.name, "session_id": "s", "cwd": "/"}
    for name in spec.payload:
        payload.update(PAYLOADS[name])
    return payload


def finished(stdout: bytes, code: int) -> ProcessResult:
    return ProcessResult(
        returncode=code, stdout=stdout, stderr=b"", stdout_truncated=False,
        stderr_truncated=False, timed_out=False, duration=0.0,
    )  # fmt: skip


def decode(fmt: str, spec: EventSpec, stdout: bytes, code: int = 0) -> HookReply | BadReply:
    try:
        return FORMATS[fmt].decode(spec, payload_for(spec), finished(stdout, code))
    except BadReply as exc:
        return exc


# --- replies ------------------------------------------------------------------------------------

stdouts = (
    st.binary(max_size=300)
    | json_values.map(lambda value: json.dumps(value).encode())
    | st.dictionaries(st.sampled_from(["action", "reason", "mutated", "message", "prompt"]),
                      json_values).map(lambda value: json.dumps(value).encode())
)  # fmt: skip


@given(
    fmt=st.sampled_from(["native", "mecatl"]),
    spec=mecatl_events,
    stdout=stdouts,
    code=st.sampled_from([0, 2, 1, 126, 127, 255, -9, -15]),
)
def test_no_stdout_and_exit_status_escapes_decode(
    fmt: str, spec: EventSpec, stdout: bytes, code: int
) -> None:
    answer = decode(fmt, spec, stdout, code)
    if code not in (0, 2):
        assert isinstance(answer, BadReply)
    if isinstance(answer, HookReply):
        if code == 2 and fmt == "mecatl" and spec.mecatl_phase in ANNOTATE_ONLY:
            assert not answer.block  # the seed's team phases only annotate
            assert answer.message
        elif code == 2:
            assert answer.block
            assert answer.reason
        if code == 0 and fmt == "mecatl":
            assert not answer.block  # only exit 2 blocks in the Mecatl contract
        assert set(answer.changes) <= set(spec.mutable)
        if answer.block:
            assert answer.changes == {}


@given(spec=events, stdout=stdouts, code=st.sampled_from([0, 2, 3]))
@example(spec=EVENTS["preToolCall"], stdout=b'{"a": ' + b"[" * 10**5 + b"]" * 10**5 + b"}", code=0)
@example(spec=EVENTS["preToolCall"], stdout=b'{"action": ["block"]}', code=0)
def test_native_decode_never_raises_anything_else(
    spec: EventSpec, stdout: bytes, code: int
) -> None:
    decode("native", spec, stdout, code)


def _maybe(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly well-formed values, sometimes anything at all."""
    return valid | json_values


native_fields: dict[str, st.SearchStrategy[Any]] = {
    "action": _maybe(st.sampled_from(list(ACTIONS))),
    "reason": _maybe(text | st.none()),
    "message": _maybe(text | st.none()),
    "context": _maybe(text | st.none()),
    "prompt": _maybe(text),
    "question": _maybe(text),
    "answer": _maybe(text),
    "arguments": _maybe(st.dictionaries(text, json_values, max_size=3)),
    "result": _maybe(
        text | st.fixed_dictionaries({"content": text}, optional={"is_error": st.booleans()})
    ),
    "conversation": _maybe(
        st.lists(st.fixed_dictionaries({"role": text, "content": text}), max_size=3)
    ),
    "agent": text,
    "argumnets": json_values,
}
native_replies = st.fixed_dictionaries({}, optional=native_fields)


@given(spec=events, reply=native_replies)
def test_the_native_schema_accepts_exactly_what_the_engine_accepts(
    spec: EventSpec, reply: dict[str, Any]
) -> None:
    answer = decode("native", spec, json.dumps(reply).encode())
    validator = jsonschema.Draft202012Validator(schema_for(spec.name, "native", "reply"))
    assert isinstance(answer, HookReply) is validator.is_valid(reply), answer


@given(spec=events, reply=st.dictionaries(text, json_values, max_size=5))
def test_arbitrary_json_objects_as_native_replies(spec: EventSpec, reply: dict[str, Any]) -> None:
    answer = decode("native", spec, json.dumps(reply).encode())
    validator = jsonschema.Draft202012Validator(schema_for(spec.name, "native", "reply"))
    assert isinstance(answer, HookReply) is validator.is_valid(reply), answer


mutations = _maybe(
    st.fixed_dictionaries({"prompt": text})
    | st.fixed_dictionaries({"content": text, "is_error": st.booleans()})
    | st.dictionaries(text, json_values, max_size=3)
)
mecatl_envelopes = st.fixed_dictionaries(
    {}, optional={"mutated": mutations, "message": text | st.none(), "extra": json_values}
)


@given(spec=mecatl_events, envelope=mecatl_envelopes)
def test_the_mecatl_schema_accepts_exactly_what_the_engine_accepts(
    spec: EventSpec, envelope: dict[str, Any]
) -> None:
    answer = decode("mecatl", spec, json.dumps(envelope).encode())
    validator = jsonschema.Draft202012Validator(schema_for(spec.name, "mecatl", "reply"))
    assert isinstance(answer, HookReply) is validator.is_valid(envelope), answer


@given(prompt=st.text(st.characters(exclude_categories=())))
def test_any_prompt_reaches_the_hook_as_utf8_json(prompt: str) -> None:
    """Surrogates included: text decoded with surrogateescape must not fail the hook."""
    spec = EVENTS["preGeneration"]
    payload = {**payload_for(spec), "prompt": prompt}
    native = json.loads(FORMATS["native"].encode(spec, payload).decode("utf-8"))
    mecatl = json.loads(FORMATS["mecatl"].encode(spec, payload).decode("utf-8"))
    assert native["prompt"] == mecatl["Input"]["prompt"] == prompt


@given(payload=st.dictionaries(text, json_values, max_size=5))
def test_the_native_event_is_what_the_json_module_writes(payload: dict[str, Any]) -> None:
    """The native format's encoder made once is `json.dumps` with its options, byte for byte."""
    spec = EVENTS["preToolCall"]
    expected = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    assert FORMATS["native"].encode(spec, payload) == expected.encode("utf-8", "backslashreplace")


# --- config -------------------------------------------------------------------------------------


def parse_config_text(source: str) -> None:
    document = parse_yaml(source, "hookgate.yaml")
    if document is None:
        return
    where = Where("hookgate.yaml")
    document = expect_mapping(document, where, "the file's top level")
    parse_hooks(document.get("hooks"), where.key(document, "hooks"), base_dir=BASE_DIR)


event_spellings = st.sampled_from(sorted(EVENT_NAMES)) | text
yaml_fragments = st.sampled_from(
    ["command", "args", "matcher", "timeout", "onError", "format", "env", "cwd", "name",
     "shell", "x", "[", "]", "{", "}", ":", "-", "'", '"', "&a", "*a", "!!binary", "!!int",
     "10 sec", "500ms", "fail", "mecatl", "((", "a{99999999999}", "1e400", "~", "\\0"]
) | text  # fmt: skip
structured_yaml = st.builds(
    lambda event, key, value, extra: f"hooks:\n  {event}:\n    - {key}: {value}\n      {extra}\n",
    event_spellings,
    yaml_fragments,
    yaml_fragments,
    yaml_fragments,
)


@given(source=st.text() | structured_yaml)
def test_no_config_text_raises_anything_but_config_error(source: str) -> None:
    with contextlib.suppress(ConfigError):
        parse_config_text(source)


hook_entries = st.dictionaries(
    st.sampled_from(HOOK_KEYS) | text | st.integers(),
    st.sampled_from(["true", "json:loads", "json:nope", "no_such_mod:f", "10s", "fail", "^x"])
    | yaml_values,
    max_size=6,
)


@given(spec=events, entry=hook_entries | yaml_values)
@example(spec=EVENTS["preToolCall"], entry={"command": "x", "timeout": 10**400})
@example(spec=EVENTS["preToolCall"], entry={"command": "x", "matcher": "a{99999999999}"})
@example(spec=EVENTS["preToolCall"], entry={"command": "x", "matcher": "(" * 1000 + ")" * 1000})
@example(spec=EVENTS["preToolCall"], entry={"command": "x", "cwd": "a\0b"})
def test_no_hook_entry_raises_anything_but_config_error(spec: EventSpec, entry: Any) -> None:
    try:
        hook = parse_hook(entry, spec, Where("hookgate.yaml", "hooks.x[0]"), base_dir=BASE_DIR)
    except ConfigError:
        return
    assert 0 < hook.timeout <= 3600
    assert len([x for x in (hook.command, hook.args, hook.function) if x is not None]) == 1


@given(
    hooks=st.dictionaries(
        event_spellings | st.integers(),
        st.lists(hook_entries, max_size=2) | yaml_values,
        max_size=3,
    )
)
def test_no_hooks_mapping_raises_anything_but_config_error(hooks: dict[Any, Any]) -> None:
    with contextlib.suppress(ConfigError):
        parse_hooks(hooks, Where("hookgate.yaml", "hooks"), base_dir=BASE_DIR)


@given(value=yaml_values)
def test_parse_duration_never_raises(value: Any) -> None:
    seconds = parse_duration(value)
    assert seconds is None or isinstance(seconds, float)


claude_events = st.sampled_from([spec for spec in EVENTS.values() if spec.aliases])
claude_specific = st.fixed_dictionaries(
    {},
    optional={
        "hookEventName": _maybe(st.sampled_from(["PreToolUse", "PostToolUse", "Stop"])),
        "permissionDecision": _maybe(st.sampled_from(["allow", "deny", "ask", "defer"])),
        "permissionDecisionReason": _maybe(text),
        "updatedInput": _maybe(st.dictionaries(text, json_values, max_size=3)),
        "additionalContext": _maybe(text),
        "updatedToolOutput": json_values,
    },
)
claude_replies = st.fixed_dictionaries(
    {},
    optional={
        "continue": _maybe(st.booleans()),
        "stopReason": _maybe(text),
        "systemMessage": _maybe(text),
        "decision": _maybe(st.sampled_from(["approve", "block"])),
        "reason": _maybe(text),
        "hookSpecificOutput": _maybe(claude_specific),
    },
)


@given(spec=claude_events, reply=claude_replies, code=st.sampled_from([0, 2, 1]))
def test_claude_decode_never_raises_anything_else(
    spec: EventSpec, reply: dict[str, Any], code: int
) -> None:
    answer = decode("claude", spec, json.dumps(reply).encode(), code)
    if isinstance(answer, HookReply):
        assert set(answer.changes) <= set(spec.mutable)
        assert answer.permission in (None, "allow", "ask")


@given(
    tool=st.sampled_from(["shell", "read_file", "write_file", "edit_file", "list_files", "grep",
                          "ask_agent", "mcp__x__y"]),
    arguments=st.dictionaries(
        st.sampled_from(["command", "timeout", "path", "offset", "content", "old_string",
                         "pattern", "agent", "question", "with_context"]) | text,
        json_values | st.integers(min_value=10**300, max_value=10**400),
        max_size=4,
    ),
    result=json_values,
    updated=json_values | st.dictionaries(
        st.sampled_from(["command", "timeout", "file_path", "-i"]),
        json_values | st.integers(min_value=10**300, max_value=10**400),
    ),
)  # fmt: skip
def test_claude_encoding_never_fails_on_what_the_model_sends(
    tool: str, arguments: dict[str, Any], result: Any, updated: Any
) -> None:
    """The model's arguments reach the encoding unvalidated; a failure there would fail
    a guard open. A hook's reply may be refused, but only as a BadReply."""
    for name in ("preToolCall", "postToolCall"):
        payload = {
            "event": name,
            "session_id": "s",
            "cwd": "/p",
            "tool": tool,
            "arguments": arguments,
            "result": {"content": str(result), "is_error": False},
        }
        FORMATS["claude"].encode(EVENTS[name], payload)
    for name, key in (("preToolCall", "updatedInput"), ("postToolCall", "updatedToolOutput")):
        with contextlib.suppress(BadReply):
            reply_from_claude(EVENTS[name], payload, {"hookSpecificOutput": {key: updated}})
