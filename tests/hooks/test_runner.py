"""The runner: chain order and composition, blocks, onError, matchers, callables, environment."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import textwrap
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import (
    EVENTS,
    ConfigError,
    HookEngine,
    HookReply,
    OnError,
    Outcome,
    callable_hook,
    load_hooks_file,
)

MakeEngine = Callable[..., HookEngine]
RunHooks = Callable[..., Outcome]

SHELL_CALL = {"tool": "shell", "arguments": {"command": "ls"}}
#: A native hook that appends `$1` to the prompt it reads (a one-line jq program).
APPEND = "jq -c '{prompt: (.prompt + \"%s\")}'"


def log_to(path: Path, word: str) -> str:
    """A hook that appends `word` to `path`, then allows."""
    return f"echo {word} >> {shlex.quote(str(path))}"


# --- the chain ----------------------------------------------------------------------------


def test_hooks_run_in_list_order(
    tmp_path: Path, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    log = tmp_path / "log"
    engine = make_engine(
        {"preToolCall": [{"command": log_to(log, word)} for word in ("one", "two", "three")]}
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert log.read_text().split() == ["one", "two", "three"]
    assert outcome.hooks_run == 3
    assert outcome.allowed


def test_each_hook_sees_the_rewrite_of_the_one_before(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine({"preGeneration": [{"command": APPEND % "1"}, {"command": APPEND % "2"}]})
    outcome = run_hooks(engine, "preGeneration", {"prompt": "q"})
    assert outcome.payload == {"prompt": "q12"}
    assert outcome.changed == ("prompt",)


def test_the_first_block_ends_the_chain(
    tmp_path: Path, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    log = tmp_path / "log"
    engine = make_engine(
        {
            "preToolCall": [
                {"command": log_to(log, "first")},
                {"name": "guard", "command": "echo 'no shell today'; exit 2"},
                {"command": log_to(log, "after")},
            ]
        }
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert outcome.reason == "no shell today"
    assert outcome.blocked_by == "guard"
    assert log.read_text().split() == ["first"]
    assert outcome.hooks_run == 2


def test_a_block_on_post_tool_call_only_annotates(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    """The tool already ran: the objection is noted and the chain goes on."""
    engine = make_engine(
        {
            "postToolCall": [
                {"name": "auditor", "command": "echo 'looks like a secret'; exit 2"},
                {"command": 'echo \'{"result": "[scrubbed]"}\''},
            ]
        }
    )
    result = {"content": "AKIA...", "is_error": False}
    outcome = run_hooks(
        engine, "postToolCall", {"tool": "shell", "arguments": {}, "result": result}
    )
    assert not outcome.blocked
    assert outcome.payload["result"] == {"content": "[scrubbed]", "is_error": False}
    assert any("auditor" in n and "looks like a secret" in n for n in outcome.notices)
    assert outcome.hooks_run == 2


def test_an_event_with_no_hooks_is_allowed_untouched(make_engine: MakeEngine) -> None:
    engine = make_engine({})
    outcome = asyncio.run(engine.run("preToolCall", SHELL_CALL))
    assert outcome.allowed
    assert outcome.payload == SHELL_CALL
    assert outcome.hooks_run == 0


def test_context_from_several_hooks_is_kept_in_order(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(
        {
            "preGeneration": [
                {"command": 'echo \'{"context": "the repo uses tabs"}\''},
                {"command": 'echo \'{"context": "today is Friday"}\''},
            ]
        }
    )
    outcome = run_hooks(engine, "preGeneration", {"prompt": "q"})
    assert outcome.context == ("the repo uses tabs", "today is Friday")


@pytest.mark.parametrize("action", ["block", "deny", "stop"])
def test_every_blocking_action_blocks(
    make_engine: MakeEngine, run_hooks: RunHooks, action: str
) -> None:
    reply = json.dumps({"action": action, "reason": "policy"})
    engine = make_engine({"preToolCall": [{"command": f"echo '{reply}'"}]})
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert outcome.reason == "policy"


def test_a_reply_field_the_event_cannot_change_is_a_failure(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    """A typo must never read as an allow: under `fail` it blocks."""
    engine = make_engine(
        {"preToolCall": [{"name": "g", "command": "echo '{\"argumnets\": {}}'", "onError": "fail"}]}
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert "unknown reply field 'argumnets'" in (outcome.reason or "")
    assert outcome.payload == SHELL_CALL


def test_pre_ask_cannot_reroute_the_hand_off(make_engine: MakeEngine, run_hooks: RunHooks) -> None:
    engine = make_engine({"preAsk": [{"command": 'echo \'{"agent": "other"}\''}]})
    payload = {"agent": "reviewer", "question": "ok?", "conversation": []}
    outcome = run_hooks(engine, "preAsk", payload)
    assert outcome.payload == payload
    assert "cannot change which agent is asked" in outcome.errors[0].message


# --- onError --------------------------------------------------------------------------------


def test_on_error_warn_notes_the_failure_and_goes_on(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(
        {
            "preGeneration": [
                {"name": "broken", "command": "exit 3", "onError": "warn"},
                {"command": APPEND % "!"},
            ]
        }
    )
    outcome = run_hooks(engine, "preGeneration", {"prompt": "q"})
    assert outcome.allowed
    assert outcome.payload == {"prompt": "q!"}
    assert outcome.notices == ("hook 'broken' (preGeneration) failed: exit 3",)
    assert [(e.hook, e.on_error) for e in outcome.errors] == [("broken", OnError.WARN)]


def test_on_error_fail_blocks_with_a_reason_naming_the_failed_hook(
    tmp_path: Path, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    log = tmp_path / "log"
    engine = make_engine(
        {
            "preToolCall": [
                {"name": "guard", "command": "exit 3", "onError": "fail"},
                {"command": log_to(log, "after")},
            ]
        }
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert outcome.reason == "hook 'guard' failed: exit 3"
    assert outcome.blocked_by == "guard"
    assert not log.exists()


def test_on_error_ignore_says_nothing_and_goes_on(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(
        {
            "preGeneration": [
                {"command": "exit 3", "onError": "ignore"},
                {"command": APPEND % "!"},
            ]
        }
    )
    outcome = run_hooks(engine, "preGeneration", {"prompt": "q"})
    assert outcome.allowed
    assert outcome.payload == {"prompt": "q!"}
    assert (outcome.notices, outcome.errors) == ((), ())


@pytest.mark.parametrize(
    "event", ["sessionStart", "SessionStart", "preGeneration", "UserPromptSubmit"]
)
def test_session_start_and_pre_generation_are_fail_safe_by_default(
    make_engine: MakeEngine, run_hooks: RunHooks, event: str
) -> None:
    engine = make_engine({event: [{"name": "setup", "command": "exit 1"}]})
    outcome = run_hooks(
        engine, event, {"source": "startup"} if "ession" in event else {"prompt": "q"}
    )
    assert outcome.blocked
    assert outcome.reason == "hook 'setup' failed: exit 1"


def test_a_fail_safe_event_honours_an_explicit_on_error(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine({"sessionStart": [{"command": "exit 1", "onError": "warn"}]})
    assert run_hooks(engine, "sessionStart", {"source": "startup"}).allowed


@pytest.mark.parametrize(
    ("event", "payload"),
    [
        ("preToolCall", SHELL_CALL),
        ("postToolCall", {**SHELL_CALL, "result": {"content": "", "is_error": False}}),
        ("postGeneration", {"prompt": "q", "answer": "a", "outcome": "answered"}),
        ("preAsk", {"agent": "a", "question": "q", "conversation": []}),
        ("postAsk", {"agent": "a", "question": "q", "answer": "x", "error": None}),
        ("taskCreated", {"task": {}}),
    ],
)
def test_other_events_only_warn_by_default(
    make_engine: MakeEngine, run_hooks: RunHooks, event: str, payload: dict[str, Any]
) -> None:
    engine = make_engine({event: [{"name": "h", "command": "exit 1"}]})
    outcome = run_hooks(engine, event, payload)
    assert outcome.allowed
    assert outcome.notices == (f"hook 'h' ({event}) failed: exit 1",)


def test_fail_on_an_event_that_cannot_block_annotates(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(
        {"postGeneration": [{"name": "audit", "command": "exit 1", "onError": "fail"}]}
    )
    outcome = run_hooks(
        engine, "postGeneration", {"prompt": "q", "answer": "a", "outcome": "answered"}
    )
    assert not outcome.blocked
    assert any("audit" in notice and "failed: exit 1" in notice for notice in outcome.notices)


# --- matchers and spellings -----------------------------------------------------------------


def test_a_matcher_selects_tools_by_name(make_engine: MakeEngine, run_hooks: RunHooks) -> None:
    engine = make_engine({"preToolCall": [{"matcher": "^shell$", "command": "exit 2"}]})
    assert run_hooks(engine, "preToolCall", SHELL_CALL).blocked
    other = run_hooks(engine, "preToolCall", {"tool": "shell_history", "arguments": {}})
    assert other.allowed
    assert other.hooks_run == 0


def test_a_matcher_is_a_regex_search(make_engine: MakeEngine, run_hooks: RunHooks) -> None:
    engine = make_engine({"postToolCall": [{"matcher": "mcp__.*__write", "command": "exit 1"}]})
    payload = {"arguments": {}, "result": {"content": "", "is_error": False}}
    assert (
        run_hooks(engine, "postToolCall", {**payload, "tool": "mcp__fs__write_file"}).hooks_run == 1
    )
    assert run_hooks(engine, "postToolCall", {**payload, "tool": "mcp__fs__read"}).hooks_run == 0


@pytest.mark.parametrize("event", ["preAsk", "postAsk"])
def test_a_matcher_selects_hand_offs_by_agent_name(
    make_engine: MakeEngine, run_hooks: RunHooks, event: str
) -> None:
    engine = make_engine({event: [{"matcher": "^reviewer$", "command": "exit 2"}]})
    fields: dict[str, Any] = {"question": "q", "conversation": [], "answer": "a", "error": None}
    payload = {name: fields[name] for name in EVENTS[event].payload if name != "agent"}
    assert run_hooks(engine, event, {**payload, "agent": "reviewer"}).hooks_run == 1
    assert run_hooks(engine, event, {**payload, "agent": "writer"}).hooks_run == 0


@pytest.mark.parametrize("spelling", ["preToolCall", "PreToolUse"])
@pytest.mark.parametrize("fired_as", ["preToolCall", "PreToolUse"])
def test_both_spellings_name_the_same_event(
    make_engine: MakeEngine, run_hooks: RunHooks, spelling: str, fired_as: str
) -> None:
    engine = make_engine({spelling: [{"command": "exit 2"}]})
    assert [h.event.name for h in engine.hooks_for("preToolCall")] == ["preToolCall"]
    outcome = run_hooks(engine, fired_as, SHELL_CALL)
    assert outcome.blocked
    assert outcome.event == "preToolCall"


def test_firing_an_unknown_event_is_an_error_with_a_suggestion(make_engine: MakeEngine) -> None:
    engine = make_engine({})
    with pytest.raises(ConfigError, match="did you mean 'preToolCall'"):
        asyncio.run(engine.run("preToolcall", SHELL_CALL))


# --- Python callables -----------------------------------------------------------------------


def test_a_sync_callable_rewrites_the_payload(run_hooks: RunHooks) -> None:
    seen: list[Mapping[str, Any]] = []

    def quote_paths(event: Mapping[str, Any]) -> dict[str, Any]:
        seen.append(event)
        return {"arguments": {"command": event["arguments"]["command"] + " -- ."}}

    engine = HookEngine(session_id="s1", extra=[callable_hook("PreToolUse", quote_paths)])
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.payload["arguments"] == {"command": "ls -- ."}
    assert seen[0]["event"] == "preToolCall"
    assert seen[0]["session_id"] == "s1"
    assert seen[0]["cwd"] == os.getcwd()


def test_an_async_callable_blocks(run_hooks: RunHooks) -> None:
    async def guard(event: Mapping[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"action": "deny", "reason": f"{event['tool']} is off"}

    engine = HookEngine(session_id="s", extra=[callable_hook("preToolCall", guard, name="g")])
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert outcome.reason == "shell is off"
    assert outcome.blocked_by == "g"


def test_a_callable_may_answer_with_a_hook_reply(run_hooks: RunHooks) -> None:
    def add_context(_: Mapping[str, Any]) -> HookReply:
        return HookReply(context="be brief")

    engine = HookEngine(session_id="s", extra=[callable_hook("preGeneration", add_context)])
    assert run_hooks(engine, "preGeneration", {"prompt": "q"}).context == ("be brief",)


def test_a_hook_reply_a_native_reply_cannot_say_is_a_failure_not_a_drop(
    run_hooks: RunHooks,
) -> None:
    def ask(_: Mapping[str, Any]) -> HookReply:
        return HookReply(permission="ask")

    engine = HookEngine(session_id="s", extra=[callable_hook("preToolCall", ask, name="a")])
    outcome = run_hooks(engine, "preToolCall", {"tool": "shell", "arguments": {}})
    assert outcome.permission is None
    assert "cannot set permission" in outcome.errors[0].message


def test_a_callable_cannot_change_the_payload_behind_the_engines_back(run_hooks: RunHooks) -> None:
    def vandal(event: Mapping[str, Any]) -> None:
        event["arguments"]["command"] = "rm -rf /"

    engine = HookEngine(session_id="s", extra=[callable_hook("preToolCall", vandal)])
    outcome = run_hooks(engine, "preToolCall", {"tool": "shell", "arguments": {"command": "ls"}})
    assert outcome.payload["arguments"] == {"command": "ls"}


@pytest.mark.parametrize(
    ("on_error", "blocked"), [("warn", False), ("fail", True), ("ignore", False)]
)
def test_a_raising_callable_is_a_hook_failure(
    run_hooks: RunHooks, on_error: str, blocked: bool
) -> None:
    def broken(_: Mapping[str, Any]) -> None:
        raise ValueError("boom")

    hook = callable_hook("preToolCall", broken, name="broken", on_error=on_error)
    outcome = run_hooks(HookEngine(session_id="s", extra=[hook]), "preToolCall", SHELL_CALL)
    assert outcome.blocked is blocked
    expected = "raised ValueError: boom"
    if on_error == "ignore":
        assert outcome.errors == ()
    else:
        assert outcome.errors[0].message == expected
    if blocked:
        assert outcome.reason == f"hook 'broken' failed: {expected}"


def test_a_slow_async_callable_times_out(run_hooks: RunHooks) -> None:
    async def slow(_: Mapping[str, Any]) -> None:
        await asyncio.sleep(30)

    hook = callable_hook("preToolCall", slow, name="slow", timeout=0.1, on_error="fail")
    outcome = run_hooks(HookEngine(session_id="s", extra=[hook]), "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert outcome.reason == "hook 'slow' failed: timed out after 0.1s"


def test_an_async_callable_under_run_sync_in_a_running_loop_fails_clearly(
    make_engine: MakeEngine,
) -> None:
    """run_sync cannot start a loop of its own inside one: the hook fails, it does not hang."""

    async def guard(event: Mapping[str, Any]) -> None:
        raise AssertionError("never runs")

    engine = make_engine({}, extra=[callable_hook("preToolCall", guard)])

    async def inside_a_loop() -> Outcome:
        return engine.run_sync("preToolCall", SHELL_CALL)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "coroutine was never awaited"
        outcome = asyncio.run(inside_a_loop())
    assert outcome.allowed
    assert [failure.message for failure in outcome.errors] == [
        "raised RuntimeError: an async Python hook under run_sync, in a running event loop"
    ]


def test_a_callable_answering_nonsense_has_failed(run_hooks: RunHooks) -> None:
    hook = callable_hook("preToolCall", lambda _: "yes", name="odd")
    outcome = run_hooks(HookEngine(session_id="s", extra=[hook]), "preToolCall", SHELL_CALL)
    assert outcome.allowed
    assert "must return a mapping or None" in outcome.errors[0].message


def test_callable_hook_takes_either_spelling_and_the_event_defaults() -> None:
    hook = callable_hook("UserPromptSubmit", lambda _: None, matcher=None)
    assert hook.event.name == "preGeneration"
    assert hook.on_error is OnError.FAIL  # fail-safe event
    assert hook.timeout == 10.0
    assert callable_hook("postToolCall", lambda _: None).on_error is OnError.WARN


def test_callable_hook_refuses_an_unknown_event() -> None:
    with pytest.raises(ConfigError, match="did you mean 'postToolCall'"):
        callable_hook("postToolcall", lambda _: None)


def test_callables_run_after_the_config_hooks(
    tmp_path: Path, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    order: list[str] = []
    config_hook = {"command": log_to(tmp_path / "log", "config")}

    def last(_: Mapping[str, Any]) -> None:
        order.append((tmp_path / "log").read_text().strip())

    engine = make_engine({"preToolCall": [config_hook]}, extra=[callable_hook("preToolCall", last)])
    run_hooks(engine, "preToolCall", SHELL_CALL)
    assert order == ["config"]


def test_python_hooks_from_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    (tmp_path / "my_policy.py").write_text(
        textwrap.dedent(
            """
            async def no_secrets(event):
                if "sk-" in event["prompt"].lower():  # it sees the shouted prompt
                    return {"action": "stop", "reason": "a key in the prompt"}

            def shout(event):
                return {"prompt": event["prompt"].upper()}
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    engine = make_engine(
        {
            "preGeneration": [
                {"python": "my_policy:shout"},
                {"python": "my_policy:no_secrets", "name": "secrets"},
            ]
        }
    )
    assert run_hooks(engine, "preGeneration", {"prompt": "hi"}).payload == {"prompt": "HI"}
    outcome = run_hooks(engine, "preGeneration", {"prompt": "use sk-abc"})
    assert outcome.blocked
    assert outcome.reason == "a key in the prompt"
    assert outcome.blocked_by == "secrets"
    sys.modules.pop("my_policy", None)


# --- what reaches the hook ------------------------------------------------------------------


def test_hookgate_variables_and_env_reach_the_hook(
    tmp_path: Path, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    out = tmp_path / "env.txt"
    names = ["HOOKGATE_EVENT", "HOOKGATE_SESSION_ID", "HOOKGATE_PROJECT_DIR",
             "HOOKGATE_HOOK_NAME", "HOOKGATE_ASKED_DEPTH", "GREETING"]  # fmt: skip
    script = "printf '%s\\n' " + " ".join(f'"${name}"' for name in names) + f" > {out}"
    engine = make_engine(
        {"UserPromptSubmit": [{"name": "probe", "command": script, "env": {"GREETING": "hi"}}]},
        session_id="sess-42",
        project_dir=str(tmp_path),
        asked_depth=2,
    )
    run_hooks(engine, "preGeneration", {"prompt": "q"})
    assert out.read_text().splitlines() == [
        "preGeneration", "sess-42", str(tmp_path), "probe", "2", "hi",
    ]  # fmt: skip


def test_the_payload_says_how_deep_the_agent_was_asked(
    tmp_path: Path, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    out = tmp_path / "payload.json"
    engine = make_engine({"preGeneration": [{"command": f"cat > {out}"}]}, asked_depth=1)
    run_hooks(engine, "preGeneration", {"prompt": "q"})
    assert json.loads(out.read_text())["asked"] == {"depth": 1}
    top = make_engine({"preGeneration": [{"command": f"cat > {out}"}]})
    run_hooks(top, "preGeneration", {"prompt": "q"})
    assert "asked" not in json.loads(out.read_text())


def test_hooks_run_in_the_project_dir(
    tmp_path: Path, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    """A project dir other than ours: the hook starts through the Popen path."""
    out = tmp_path / "pwd"
    engine = make_engine({"preToolCall": [{"command": f"pwd > {out}"}]}, project_dir=str(tmp_path))
    run_hooks(engine, "preToolCall", SHELL_CALL)
    assert out.read_text().strip() == str(tmp_path)


def test_a_hook_cwd_is_relative_to_the_config_file(
    tmp_path: Path, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    (tmp_path / "hooks").mkdir()
    out = tmp_path / "pwd"
    engine = make_engine({"preToolCall": [{"command": f"pwd > {out}", "cwd": "hooks"}]})
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.errors == ()
    assert out.read_text().strip() == str((tmp_path / "hooks").resolve())
    assert engine.project_dir == os.getcwd()  # the payload's cwd stays the project's


def test_exec_form_passes_arguments_without_a_shell(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(
        {"preToolCall": [{"name": "p", "args": ["printf", '{"message": "$HOME *"}']}]}
    )
    assert run_hooks(engine, "preToolCall", SHELL_CALL).notices == ("p: $HOME *",)


def test_the_configured_shell_runs_the_command(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    script = 'read -r line <<< "$(cat)"; echo "{\\"message\\": \\"${BASH_VERSION:+bash}\\"}"'
    engine = make_engine({"preToolCall": [{"name": "b", "command": script, "shell": "/bin/bash"}]})
    assert run_hooks(engine, "preToolCall", SHELL_CALL).notices == ("b: bash",)


def test_hooks_are_read_once_per_session(tmp_path: Path, run_hooks: RunHooks) -> None:
    """A model with a shell cannot switch a guard off by editing the file mid-run."""
    path = tmp_path / "hookgate.yaml"
    path.write_text("hooks:\n  preToolCall:\n    - command: echo 'guarded'; exit 2\n")
    engine = HookEngine(load_hooks_file(path), session_id="s")
    path.write_text("hooks: {}\n")
    assert run_hooks(engine, "preToolCall", SHELL_CALL).blocked


def test_changes_in_a_blocking_reply_are_applied_before_the_chain_stops() -> None:
    """A deny that also replaces the arguments is a redaction: both reach the outcome."""

    def redact(event: dict[str, object]) -> dict[str, object]:
        return {"action": "deny", "reason": "secret", "arguments": {"command": "[REDACTED]"}}

    engine = HookEngine(session_id="s", extra=[callable_hook("preToolCall", redact)])
    outcome = asyncio.run(
        engine.run("preToolCall", {"tool": "shell", "arguments": {"command": "x"}})
    )
    assert outcome.blocked
    assert outcome.changed == ("arguments",)
    assert outcome.payload["arguments"] == {"command": "[REDACTED]"}
