"""Golden JSON for every event in every format, checked both ways, and the shipped schemas.

`golden/EVENT.FORMAT.payload.json` is what a hook reads on stdin, captured by a real
hook (`cat > file`); `golden/EVENT.FORMAT.reply.json` is a representative answer,
fed back by a real hook (`cat reply.json`), and `golden/EVENT.FORMAT.outcome.json` is
the Outcome it must give. Every golden validates against its shipped JSON Schema.
`golden_asked/` holds what an asked agent under `yolo: true` reads, in each format.

After an intended change, rewrite the payload and outcome goldens with
`HOOKGATE_UPDATE_GOLDEN=1 .venv/bin/pytest tests/hooks/test_golden.py` and review
the diff; reply goldens are written by hand.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hookgate.hooks import EVENTS, FORMATS, ConfigError, HookEngine, Outcome, parse_hooks
from hookgate.hooks.author.schema import all_schemas, schema_for
from hookgate.hooks.files.yamlfile import Where

RunHooks = Callable[..., Outcome]

GOLDEN = Path(__file__).parent / "golden"
SHIPPED = Path(__file__).parents[2] / "src" / "hookgate" / "hooks" / "schemas"
UPDATE = os.environ.get("HOOKGATE_UPDATE_GOLDEN") == "1"
SESSION_ID = "0f9c2a7e5b6d4c3a"
PROJECT_DIR = "/home/dev/project"

#: Each event's own fields, as the agent hands them to the engine.
SAMPLES: dict[str, dict[str, Any]] = {
    "sessionStart": {"source": "startup"},
    "preCompact": {"trigger": "auto", "custom_instructions": ""},
    "notification": {
        "message": "hookgate needs your permission to use shell",
        "notification_type": "permission_prompt",
    },
    "preGeneration": {"prompt": "Summarise README.md — en français, s'il te plaît ✓"},
    "preToolCall": {
        "tool": "shell",
        "call_id": "call_8f3a1c",
        "arguments": {"command": "rm -rf build", "timeout": 30},
    },
    "postToolCall": {
        "tool": "shell",
        "call_id": "call_8f3a1c",
        "arguments": {"command": "cat .env"},
        "result": {"content": "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n", "is_error": False},
    },
    "postGeneration": {
        "prompt": "What does this repo do?",
        "answer": "It runs hooks around an AI agent.",
        "outcome": "answered",
        "continued": False,
    },
    "preAsk": {
        "agent": "reviewer",
        "question": "Is this diff safe?",
        "conversation": [
            {"role": "user", "content": "Review the diff in PR 12."},
            {"role": "assistant", "content": "I will ask the reviewer."},
        ],
    },
    "postAsk": {
        "agent": "reviewer",
        "question": "Is this diff safe?",
        "answer": "Yes, once `tmp` is renamed.",
        "error": None,
    },
    "subagentStart": {"agent": "researcher"},
    "subagentStop": {
        "agent": "researcher",
        "answer": "Found two callers of parse().",
        "error": None,
        "continued": False,
    },
    "teammateIdle": {"team": "release", "agent": "tester"},
    "taskCreated": {
        "team": "release",
        "agent": "tester",
        "task": {"id": "1", "subject": "Write the tests", "description": "Cover the parser."},
    },
    "taskCompleted": {
        "team": "release",
        "agent": "tester",
        "task": {"id": "1", "subject": "Write the tests", "description": "Cover the parser."},
        "answer": "Added 12 tests; all pass.",
        "error": None,
    },
}

CASES = [
    (event, fmt)
    for event, spec in EVENTS.items()
    for fmt, reply_format in FORMATS.items()
    if reply_format.supports(spec)
]


def engine_for(event: str, fmt: str, argv: list[str], workdir: Path) -> HookEngine:
    hook = {"name": "golden", "args": argv, "format": fmt, "cwd": str(workdir)}
    config = parse_hooks({event: [hook]}, Where("golden"), base_dir=workdir)
    return HookEngine(config, session_id=SESSION_ID, project_dir=PROJECT_DIR)


def render(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def check_golden(path: Path, actual: Any) -> None:
    """`actual` must equal the golden file, key order included."""
    if UPDATE:
        path.write_text(render(actual), encoding="utf-8")
        return
    assert path.exists(), f"{path.name} is missing; write it with HOOKGATE_UPDATE_GOLDEN=1"
    assert render(actual) == path.read_text(encoding="utf-8")


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def outcome_document(outcome: Outcome) -> dict[str, Any]:
    """The parts of an Outcome a golden pins (errors by message)."""
    return {
        "blocked": outcome.blocked,
        "reason": outcome.reason,
        "blocked_by": outcome.blocked_by,
        "payload": outcome.payload,
        "changed": list(outcome.changed),
        "context": list(outcome.context),
        "notices": list(outcome.notices),
        "errors": [error.message for error in outcome.errors],
        "permission": outcome.permission,
        # Who said it, and why: only where a hook did (the goldens of the rest are as before).
        **(
            {"permission_by": outcome.permission_by, "permission_reason": outcome.permission_reason}
            if outcome.permission
            else {}
        ),
        "stop_reason": outcome.stop_reason,
        "continue_with": outcome.continue_with,
    }


def test_the_samples_carry_exactly_each_events_fields() -> None:
    assert {event: tuple(sample) for event, sample in SAMPLES.items()} == {
        name: spec.payload for name, spec in EVENTS.items()
    }


@pytest.mark.parametrize(("event", "fmt"), CASES)
def test_the_payload_a_hook_reads(
    tmp_path: Path, run_hooks: RunHooks, event: str, fmt: str
) -> None:
    captured = tmp_path / "stdin.json"
    engine = engine_for(event, fmt, ["sh", "-c", f"cat > {captured}"], tmp_path)
    outcome = run_hooks(engine, event, SAMPLES[event])
    assert outcome.errors == ()
    data = captured.read_bytes()
    check_golden(GOLDEN / f"{event}.{fmt}.payload.json", json.loads(data))
    # The other direction: the golden native envelope, encoded, is byte for byte what
    # the hook read (a mecatl payload is encoded from the same envelope).
    envelope = load(GOLDEN / f"{event}.native.payload.json")
    assert FORMATS[fmt].encode(EVENTS[event], envelope) == data


def test_payloads_are_utf8_not_ascii_escapes() -> None:
    text = (GOLDEN / "preGeneration.native.payload.json").read_text(encoding="utf-8")
    encoded = FORMATS["native"].encode(EVENTS["preGeneration"], json.loads(text))
    assert "✓".encode() in encoded
    assert b"\\u" not in encoded


@pytest.mark.parametrize(("event", "fmt"), CASES)
def test_the_reply_a_hook_gives(tmp_path: Path, run_hooks: RunHooks, event: str, fmt: str) -> None:
    reply = GOLDEN / f"{event}.{fmt}.reply.json"
    engine = engine_for(event, fmt, ["cat", str(reply)], tmp_path)
    outcome = run_hooks(engine, event, SAMPLES[event])
    check_golden(GOLDEN / f"{event}.{fmt}.outcome.json", outcome_document(outcome))


@pytest.mark.parametrize(("event", "fmt"), CASES)
@pytest.mark.parametrize("kind", ["payload", "reply"])
def test_every_golden_validates_against_its_schema(event: str, fmt: str, kind: str) -> None:
    schema = schema_for(event, fmt, kind)  # type: ignore[arg-type]
    jsonschema.Draft202012Validator(schema).validate(load(GOLDEN / f"{event}.{fmt}.{kind}.json"))


def test_every_golden_has_a_case() -> None:
    expected = {f"{e}.{f}.{k}.json" for e, f in CASES for k in ("payload", "reply", "outcome")}
    assert {path.name for path in GOLDEN.glob("*.json")} == expected


ASKED_GOLDEN = Path(__file__).parent / "golden_asked"


@pytest.mark.parametrize("fmt", ["native", "claude", "mecatl"])
@pytest.mark.parametrize("event", ["preToolCall", "postGeneration"])
def test_an_asked_agent_under_yolo_says_so_in_every_payload(
    tmp_path: Path, run_hooks: RunHooks, event: str, fmt: str
) -> None:
    """The asked agent's name and depth, and the permission mode (`yolo: true`)."""
    captured = tmp_path / "stdin.json"
    hook = {"args": ["sh", "-c", f"cat > {captured}"], "format": fmt, "cwd": str(tmp_path)}
    config = parse_hooks({event: [hook]}, Where("t"), base_dir=tmp_path)
    engine = HookEngine(
        config, session_id=SESSION_ID, project_dir=PROJECT_DIR, asked_depth=2,
        asked_agent="reviewer", permission_mode="bypassPermissions",
    )  # fmt: skip
    run_hooks(engine, event, SAMPLES[event])
    payload = load(captured)
    check_golden(ASKED_GOLDEN / f"{event}.{fmt}.payload.json", payload)
    validator = jsonschema.Draft202012Validator(schema_for(event, fmt, "payload"))
    validator.validate(payload)


# --- the shipped schemas ------------------------------------------------------------------------


def test_the_shipped_schemas_are_the_generated_ones() -> None:
    """Run `scripts/gen_schemas.py` after changing the event table or a format."""
    generated = all_schemas()
    assert sorted(path.name for path in SHIPPED.glob("*.json")) == sorted(generated)
    for name, schema in generated.items():
        assert load(SHIPPED / name) == schema, f"{name} is stale: run scripts/gen_schemas.py"


@pytest.mark.parametrize("name", sorted(all_schemas()))
def test_every_schema_is_a_valid_2020_12_schema(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(all_schemas()[name])


def test_there_is_a_schema_for_every_event_and_format() -> None:
    assert len(all_schemas()) == 2 * len(CASES)
    assert "preAsk.native.reply.json" in all_schemas()
    assert "preAsk.mecatl.reply.json" not in all_schemas()


def test_schema_for_takes_either_spelling() -> None:
    assert schema_for("PreToolUse", "native", "reply") == schema_for(
        "preToolCall", "native", "reply"
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [(("preToolcall", "native", "payload"), "did you mean 'preToolCall'"),
     (("preToolCall", "nativ", "payload"), "did you mean 'native'"),
     (("preToolCall", "native", "answer"), "unknown schema kind 'answer'"),
     (("preAsk", "mecatl", "reply"), "format 'mecatl' has no counterpart of event 'preAsk'")],
)  # fmt: skip
def test_schema_for_refuses_what_does_not_exist(args: tuple[str, str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        schema_for(*args)


@pytest.mark.parametrize(
    ("event", "fmt", "reply"),
    [
        ("preToolCall", "native", {"argumnets": {}}),
        ("preToolCall", "native", {"action": "maybe"}),
        ("postToolCall", "native", {"context": "not here"}),
        ("preAsk", "native", {"agent": "someone-else"}),
        ("postToolCall", "mecatl", {"mutated": {"content": "x"}}),
        ("postGeneration", "mecatl", {"mutated": {}}),
    ],
)
def test_schemas_refuse_what_the_engine_refuses(event: str, fmt: str, reply: Any) -> None:
    validator = jsonschema.Draft202012Validator(schema_for(event, fmt, "reply"))
    assert not validator.is_valid(reply)


def test_a_schema_is_a_fresh_copy() -> None:
    schema = schema_for("preToolCall", "native", "payload")
    schema["properties"]["tool"]["type"] = "integer"
    assert schema_for("preToolCall", "native", "payload")["properties"]["tool"] == {
        "type": "string"
    }
