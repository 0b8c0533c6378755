"""Reply formats: what each writes to a hook and how it reads the answer back.

The unit tests build `ProcessResult`s directly; the Mecatl contract's three published
examples run as real hooks through `HookEngine`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import EVENTS, FORMATS, BadReply, HookEngine, HookReply, Outcome, ProcessResult
from hookgate.hooks.formats.base import check_exit

MakeEngine = Callable[..., HookEngine]
RunHooks = Callable[..., Outcome]

NATIVE = FORMATS["native"]
MECATL = FORMATS["mecatl"]
EXAMPLES = Path(__file__).parent / "mecatl_examples"


def finished(stdout: bytes = b"", code: int = 0, stderr: bytes = b"") -> ProcessResult:
    return ProcessResult(
        returncode=code, stdout=stdout, stderr=stderr, stdout_truncated=False,
        stderr_truncated=False, timed_out=False, duration=0.01,
    )  # fmt: skip


def native(event: str, reply: Any, payload: dict[str, Any] | None = None) -> HookReply:
    stdout = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
    return NATIVE.decode(EVENTS[event], payload or {}, finished(stdout))


def mecatl(event: str, stdout: bytes, payload: dict[str, Any], code: int = 0) -> HookReply:
    return MECATL.decode(EVENTS[event], payload, finished(stdout, code))


# --- exits, whatever the format ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "says"),
    [(1, "exit 1"), (3, "exit 3"), (126, "exit 126: the command is not executable"),
     (127, "exit 127: the command was not found"), (-9, "killed by signal 9"),
     (-15, "killed by signal 15")],
)  # fmt: skip
@pytest.mark.parametrize("fmt", ["native", "mecatl"])
def test_every_exit_but_0_and_2_is_a_failure(code: int, says: str, fmt: str) -> None:
    with pytest.raises(BadReply) as caught:
        FORMATS[fmt].decode(EVENTS["preToolCall"], {}, finished(b"exit 2 would block", code))
    assert str(caught.value) == says


def test_a_failure_quotes_the_end_of_stderr() -> None:
    with pytest.raises(BadReply) as caught:
        check_exit(finished(code=1, stderr=b"x" * 1000 + b" the actual error\n"))
    assert str(caught.value).endswith("x the actual error")
    assert len(str(caught.value)) < 320


# --- native -------------------------------------------------------------------------------------


def test_native_payload_is_compact_utf8_json() -> None:
    payload = {"event": "preGeneration", "prompt": "résumé ✓"}
    data = NATIVE.encode(EVENTS["preGeneration"], payload)
    assert data == '{"event":"preGeneration","prompt":"résumé ✓"}'.encode()


@pytest.mark.parametrize("fmt", ["native", "mecatl"])
def test_a_lone_surrogate_in_the_payload_still_reaches_the_hook(fmt: str) -> None:
    """Tool output decoded with surrogateescape must not make every hook fail."""
    data = FORMATS[fmt].encode(EVENTS["preGeneration"], {"prompt": "bad \udcff byte"})
    data.decode("utf-8")  # valid UTF-8 on the wire
    assert "bad \udcff byte" in json.dumps(json.loads(data), ensure_ascii=False)


@pytest.mark.parametrize("stdout", [b"", b"\n", b"  \n\t"])
def test_native_empty_stdout_allows(stdout: bytes) -> None:
    assert native("preToolCall", stdout) == HookReply()


def test_native_reply_with_every_field() -> None:
    reply = native(
        "preToolCall",
        {"action": "allow", "arguments": {"command": "ls -a"}, "context": "c", "message": "m"},
    )
    assert reply == HookReply(changes={"arguments": {"command": "ls -a"}}, context="c", message="m")


@pytest.mark.parametrize(
    ("stdout", "stderr", "reason"),
    [(b'{"reason": "from json"}', b"err", "from json"), (b"plain words\n", b"err", "plain words"),
     (b"", b"from stderr\n", "from stderr"), (b"", b"", "no reason given")],
)  # fmt: skip
def test_native_exit_2_blocks_with_the_best_reason(
    stdout: bytes, stderr: bytes, reason: str
) -> None:
    reply = NATIVE.decode(EVENTS["preToolCall"], {}, finished(stdout, 2, stderr))
    assert reply.block
    assert reply.reason == reason


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (b"yes", "stdout is not a JSON object: 'yes'"),
        (b"[1, 2]", "stdout is not a JSON object"),
        (b'{"action": ', "stdout is not a JSON object"),
        ({"action": "maybe"}, "'action' must be one of allow, block, deny, stop, got 'maybe'"),
        ({"action": None}, "'action' must be one of"),
        ({"action": ["block"]}, "'action' must be one of"),
        ({"reason": 3}, "'reason' must be a string, got int"),
        ({"message": {}}, "'message' must be a string"),
        ({"argumnets": {}}, "unknown reply field 'argumnets'"),
        ({"prompt": "x"}, "preToolCall cannot change 'prompt'; a reply may set: action, reason"),
        ({"arguments": "ls"}, "'arguments' must be a JSON object, got str"),
    ],
)
def test_native_bad_replies(reply: Any, says: str) -> None:
    with pytest.raises(BadReply) as caught:
        native("preToolCall", reply)
    assert says in str(caught.value)


def test_native_context_only_where_the_event_takes_it() -> None:
    assert native("postAsk", {"context": "x"}).context == "x"
    with pytest.raises(BadReply, match="postToolCall cannot change 'context'"):
        native("postToolCall", {"context": "x"})


@pytest.mark.parametrize(
    ("given", "kept"),
    [("new text", {"content": "new text", "is_error": True}),
     ({"content": "new"}, {"content": "new", "is_error": True}),
     ({"content": "new", "is_error": False}, {"content": "new", "is_error": False})],
)  # fmt: skip
def test_native_result_replacement(given: Any, kept: dict[str, Any]) -> None:
    payload = {"result": {"content": "old", "is_error": True}}
    assert native("postToolCall", {"result": given}, payload).changes == {"result": kept}


@pytest.mark.parametrize(
    "given", [3, {"content": 3}, {"content": "x", "is_error": "no"}, {"content": "x", "extra": 1}]
)
def test_native_bad_result(given: Any) -> None:
    with pytest.raises(BadReply, match="'result' must be a string or"):
        native("postToolCall", {"result": given}, {"result": {"content": "", "is_error": False}})


def test_native_hand_off_rewrites() -> None:
    conversation = [{"role": "user", "content": "hi"}]
    reply = native("preAsk", {"question": "q2", "conversation": conversation})
    assert reply.changes == {"question": "q2", "conversation": conversation}
    assert native("postAsk", {"answer": "a2"}).changes == {"answer": "a2"}


@pytest.mark.parametrize(
    "conversation", ["x", [{"role": "user"}], [{"role": "user", "content": 1}], [["user", "hi"]]]
)
def test_native_bad_conversation(conversation: Any) -> None:
    with pytest.raises(BadReply, match="'conversation' must be a list"):
        native("preAsk", {"conversation": conversation})


def test_native_deeply_nested_reply_is_a_bad_reply_not_a_crash() -> None:
    deep = b'{"arguments": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(BadReply, match="not a JSON object"):
        native("preToolCall", deep)


# --- mecatl -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "payload", "tool", "phase_input"),
    [
        ("preToolCall", {"tool": "Shell", "arguments": {"command": "ls"}}, "Shell", {"command": "ls"}),
        ("postToolCall", {"tool": "Shell", "arguments": {}, "result": {"content": "x", "is_error": False}},
         "Shell", {"content": "x", "is_error": False}),
        ("preGeneration", {"prompt": "hi"}, "", {"prompt": "hi"}),
        ("sessionStart", {"source": "startup"}, "", {"source": "startup"}),
        ("postGeneration", {"prompt": "q", "answer": "a", "outcome": "answered"}, "",
         {"prompt": "q", "answer": "a", "outcome": "answered"}),
        ("subagentStop", {"agent": "child", "error": None}, "", {"agent": "child", "error": None}),
    ],
)  # fmt: skip
def test_mecatl_payload_is_the_contracts_event(
    event: str, payload: dict[str, Any], tool: str, phase_input: Any
) -> None:
    envelope = {"event": event, "session_id": "8867", "cwd": "/p", **payload}
    assert json.loads(MECATL.encode(EVENTS[event], envelope)) == {
        "Phase": EVENTS[event].mecatl_phase, "Tool": tool, "Input": phase_input, "SessionID": "8867",
    }  # fmt: skip


def test_mecatl_has_no_hand_off_events() -> None:
    assert not MECATL.supports(EVENTS["preAsk"])
    assert not MECATL.supports(EVENTS["postAsk"])
    assert all(NATIVE.supports(spec) for spec in EVENTS.values())


PROMPT = {"prompt": "hi"}
RESULT = {"tool": "Shell", "arguments": {}, "result": {"content": "x", "is_error": False}}


@pytest.mark.parametrize(
    ("stdout", "reply"),
    [
        (b"", HookReply()),
        (b"  just saying\n", HookReply(message="just saying")),
        (b"[1, 2]", HookReply(message="[1, 2]")),
        (b'{"message": "noted"}', HookReply(message="noted")),
        (b'{"unrelated": 1}', HookReply()),
        (b'{"mutated": {"prompt": "bye"}, "message": "m"}',
         HookReply(changes={"prompt": "bye"}, message="m")),
    ],
)  # fmt: skip
def test_mecatl_exit_0_replies(stdout: bytes, reply: HookReply) -> None:
    assert mecatl("preGeneration", stdout, PROMPT) == reply


def test_mecatl_tool_arguments_may_take_any_keys() -> None:
    reply = mecatl("preToolCall", b'{"mutated": {"cmd": "ls"}}', {"arguments": {"command": "ls"}})
    assert reply.changes == {"arguments": {"cmd": "ls"}}


def test_mecatl_result_mutation() -> None:
    reply = mecatl("postToolCall", b'{"mutated": {"content": "y", "is_error": true}}', RESULT)
    assert reply.changes == {"result": {"content": "y", "is_error": True}}


@pytest.mark.parametrize(
    ("event", "payload", "mutated"),
    [
        ("preGeneration", PROMPT, '{"prompt": 1}'),
        ("preGeneration", PROMPT, '{"prompt": "x", "extra": "y"}'),
        ("preGeneration", PROMPT, '"just text"'),
        ("postToolCall", RESULT, '{"content": "y"}'),
        ("postToolCall", RESULT, '{"content": "y", "is_error": "false"}'),
        ("preToolCall", {"arguments": {}}, "[]"),
    ],
)
def test_mecatl_wrong_shape_mutations(event: str, payload: dict[str, Any], mutated: str) -> None:
    with pytest.raises(BadReply, match=r"does not have the shape of .*; not applied"):
        mecatl(event, f'{{"mutated": {mutated}}}'.encode(), payload)


def test_mecatl_phases_without_a_target_cannot_mutate() -> None:
    with pytest.raises(BadReply, match="phase Stop cannot be mutated"):
        mecatl("postGeneration", b'{"mutated": {}}', {"prompt": "q", "answer": "a"})


@pytest.mark.parametrize(
    ("stdout", "stderr", "reason"),
    [(b"from stdout\n", b"from stderr", "from stdout"), (b"", b"from stderr\n", "from stderr")],
)
def test_mecatl_exit_2_reason_prefers_stdout(stdout: bytes, stderr: bytes, reason: str) -> None:
    reply = MECATL.decode(EVENTS["preToolCall"], {}, finished(stdout, 2, stderr))
    assert reply == HookReply(block=True, reason=reason)


# --- the Mecatl contract's own examples ---------------------------------------------------------


def example_hook(variant: str, script: str, event: str) -> dict[str, Any]:
    # python3 from this interpreter's folder: the examples call it twice each.
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', os.defpath)}"
    entry = {"name": script, "args": [str(EXAMPLES / variant / script)], "format": "mecatl",
             "env": {"PATH": path}}  # fmt: skip
    return {event: [entry]}


@pytest.mark.parametrize("variant", ["published", "bash"])
def test_the_rm_rf_guard_blocks_rm_rf(
    make_engine: MakeEngine, run_hooks: RunHooks, variant: str
) -> None:
    """The guard is plain POSIX sh: it works as published."""
    engine = make_engine(example_hook(variant, "pretooluse-guard.sh", "PreToolUse"))
    blocked = run_hooks(
        engine, "PreToolUse", {"tool": "Shell", "arguments": {"command": "rm -rf build"}}
    )
    assert blocked.blocked
    assert blocked.reason == "blocked: 'rm -rf' is not permitted by policy"
    allowed = run_hooks(engine, "PreToolUse", {"tool": "Shell", "arguments": {"command": "ls"}})
    assert allowed.allowed
    assert allowed.errors == ()


def test_the_prompt_redactor_replaces_api_keys(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(example_hook("bash", "prompt-redactor.sh", "UserPromptSubmit"))
    key = "sk-" + "A1b2" * 10
    outcome = run_hooks(engine, "preGeneration", {"prompt": f"my key is {key}, keep it safe"})
    assert outcome.allowed
    assert outcome.errors == ()
    # `<<<` appends a newline, and the published script passes it on.
    assert outcome.payload == {"prompt": "my key is [REDACTED], keep it safe\n"}
    assert outcome.changed == ("prompt",)


def test_the_aws_scrubber_replaces_keys_in_a_tool_result(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(example_hook("bash", "aws-scrubber.sh", "PostToolUse"))
    result = {"content": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\nregion = eu", "is_error": False}
    outcome = run_hooks(
        engine, "postToolCall", {"tool": "Shell", "arguments": {}, "result": result}
    )
    assert outcome.errors == ()
    assert outcome.payload["result"] == {
        "content": "aws_access_key_id = [REDACTED_KEY]\nregion = eu\n", "is_error": False,
    }  # fmt: skip


def _sh_is_dash() -> bool:
    return os.path.basename(os.path.realpath("/bin/sh")) == "dash"


@pytest.mark.skipif(not _sh_is_dash(), reason="needs Debian's /bin/sh (dash)")
def test_the_published_redactor_blocks_every_prompt_under_dash(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    """As published, under `#!/bin/sh`, the redactor is a guard that blocks everything.

    It uses bash's `<<<`; dash rejects that line with "Syntax error: redirection
    unexpected" and exit status 2, and exit 2 is what the contract reads as a
    deliberate block. Every prompt is refused, with dash's complaint as the reason.
    This is why `hookgate hooks check` runs each script through its own shell's
    syntax check (`sh -n`) and warns before a session ever starts.
    """
    engine = make_engine(example_hook("published", "prompt-redactor.sh", "UserPromptSubmit"))
    outcome = run_hooks(engine, "preGeneration", {"prompt": "a harmless question"})
    assert outcome.blocked
    assert "Syntax error: redirection unexpected" in (outcome.reason or "")
    assert outcome.errors == ()  # not even reported as a failure


@pytest.mark.skipif(not _sh_is_dash(), reason="needs Debian's /bin/sh (dash)")
def test_the_published_scrubber_lets_the_key_through_under_dash(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    """Its exit 2 on PostToolUse only annotates: the unscrubbed result reaches the model."""
    engine = make_engine(example_hook("published", "aws-scrubber.sh", "PostToolUse"))
    result = {"content": "AKIAIOSFODNN7EXAMPLE", "is_error": False}
    outcome = run_hooks(
        engine, "postToolCall", {"tool": "Shell", "arguments": {}, "result": result}
    )
    assert not outcome.blocked
    assert outcome.payload["result"] == result
    assert any("Syntax error" in notice for notice in outcome.notices)


def test_the_published_examples_are_the_bash_ones_but_for_the_shebang() -> None:
    for published in sorted((EXAMPLES / "published").glob("*.sh")):
        fixed = EXAMPLES / "bash" / published.name
        head, _, body = published.read_text().partition("\n")
        assert head == "#!/bin/sh"
        assert fixed.read_text() == "#!/bin/bash\n" + body
        assert os.access(published, os.X_OK)
        assert os.access(fixed, os.X_OK)


def test_a_reply_cut_at_the_output_cap_fails_with_a_message_that_says_so() -> None:
    cut = ProcessResult(
        returncode=0, stdout=b'{"action": "allow", "message": "' + b"x" * 100, stderr=b"",
        stdout_truncated=True, stderr_truncated=False, timed_out=False, duration=0.01,
    )  # fmt: skip
    with pytest.raises(BadReply, match="output cap"):
        NATIVE.decode(EVENTS["preToolCall"], {}, cut)


@pytest.mark.parametrize(
    ("event", "payload", "mutated"),
    [
        ("sessionStart", {"source": "startup"}, b'{"mutated": {"source": "startup"}}'),
        ("postGeneration", {"prompt": "q", "answer": "a", "outcome": "answered"},
         b'{"mutated": {"prompt": "q", "answer": "a", "outcome": "answered"}}'),
        ("preGeneration", {"prompt": "q"}, b'{"mutated": {"prompt": "q"}}'),
    ],
)  # fmt: skip
def test_mecatl_unchanged_input_is_no_mutation(
    event: str, payload: dict[str, Any], mutated: bytes
) -> None:
    assert mecatl(event, mutated, payload).changes == {}


def test_mecatl_input_holds_the_events_fields_not_the_envelope() -> None:
    """The transcript's path rides in the envelope, never in a Mecatl `Input`."""
    envelope = {"event": "sessionStart", "session_id": "s", "cwd": "/p",
                "transcript_path": "/h/transcripts/s.jsonl", "source": "startup"}  # fmt: skip
    event = json.loads(FORMATS["mecatl"].encode(EVENTS["sessionStart"], envelope))
    assert event["Input"] == {"source": "startup"}
