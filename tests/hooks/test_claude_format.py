"""The `claude` format: every reply form of Claude Code's hooks, and the tool mapping.

Each reply form is fed back by a real hook (`cat form.reply.json`, the exit status
given) and the Outcome it gives is pinned in `golden_claude/FORM.outcome.json`
(rewrite with HOOKGATE_UPDATE_GOLDEN=1 and review). Every reply golden validates
against the shipped claude reply schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hookgate.hooks import EVENTS, FORMATS, HookEngine, parse_hooks
from hookgate.hooks.author.schema import schema_for
from hookgate.hooks.files.yamlfile import Where
from hookgate.hooks.formats.claude_tools import (
    arguments_from_claude,
    claude_input,
    compile_claude_matcher,
)
from hooks.test_golden import SAMPLES, RunHooks, check_golden, outcome_document

GOLDEN = Path(__file__).parent / "golden_claude"
CWD = "/home/dev/project"

#: form name: (event, exit status, the reply on stdout or stderr).
FORMS: dict[str, tuple[str, int, Any]] = {
    "exit2-blocks-with-stderr": ("preToolCall", 2, "rm -rf is not allowed"),
    "exit2-on-post-tool-use-annotates": ("postToolCall", 2, "this output looks odd"),
    "exit2-on-stop-continues": ("postGeneration", 2, "run the tests first"),
    "exit1-fails-open": ("preToolCall", 1, "crashed"),
    "plain-stdout-is-prompt-context": ("preGeneration", 0, "the repo uses tabs"),
    "plain-stdout-is-ignored-on-tools": ("preToolCall", 0, "just chatter"),
    "deny": ("preToolCall", 0, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "not here"}}),
    "ask": ("preToolCall", 0, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "ask"}}),
    "ask-with-reason": ("preToolCall", 0, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "ask",
        "permissionDecisionReason": "pushing needs a human"}}),
    "defer": ("preToolCall", 0, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "defer"}}),
    "allow-updated-input": ("preToolCall", 0, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow",
        "updatedInput": {"command": "rm -rf ./build", "timeout": 5000}}}),
    "updated-input-that-cannot-map-back": ("preToolCall", 0, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "updatedInput": {"command": "ls", "sandbox": True}}}),
    "legacy-approve": ("preToolCall", 0, {"decision": "approve", "reason": "fine"}),
    "legacy-block": ("preToolCall", 0, {"decision": "block", "reason": "legacy no"}),
    "top-level-context-is-ignored": ("preToolCall", 0, {"additionalContext": "ignored"}),
    "pre-tool-use-context": ("preToolCall", 0, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "additionalContext": "build/ is generated"}}),
    "continue-false": ("preToolCall", 0, {"continue": False, "stopReason": "enough",
                                          "systemMessage": "the agent was stopped"}),
    "system-message": ("postToolCall", 0, {"systemMessage": "output checked"}),
    "prompt-block": ("preGeneration", 0, {"decision": "block", "reason": "no secrets"}),
    "prompt-context": ("preGeneration", 0, {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": "answer in French"}}),
    "post-tool-use-block-and-output": ("postToolCall", 0, {
        "decision": "block", "reason": "a key was redacted",
        "hookSpecificOutput": {"hookEventName": "PostToolUse",
                               "updatedToolOutput": "AWS_ACCESS_KEY_ID=[redacted]\n",
                               "additionalContext": "keys are never shown"}}),
    "post-tool-use-mcp-output": ("postToolCall", 0, {"hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "updatedMCPToolOutput": {"content": [{"type": "text", "text": "scrubbed"}]}}}),
    "stop-block": ("postGeneration", 0, {"decision": "block", "reason": "run the tests"}),
    "stop-block-without-reason": ("postGeneration", 0, {"decision": "block"}),
    "subagent-stop-block": ("subagentStop", 0, {"decision": "block",
                                                 "reason": "check the callers too"}),
    "exit2-on-subagent-stop-continues": ("subagentStop", 2, "list them by file"),
    "exit2-on-session-start-is-a-notice": ("sessionStart", 2, "not on this branch"),
    "session-start-block-is-a-notice": ("sessionStart", 0, {"decision": "block",
                                                             "reason": "no"}),
    "session-start-context": ("sessionStart", 0, {"hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": "on branch main"}}),
    "wrong-event-name": ("preToolCall", 0, {"hookSpecificOutput": {
        "hookEventName": "PostToolUse"}}),
    "not-json-after-brace": ("preToolCall", 0, "{not json"),
}  # fmt: skip


def engine_for(event: str, argv: list[str], workdir: Path) -> HookEngine:
    hook = {"name": "claude", "args": argv, "format": "claude", "cwd": str(workdir)}
    config = parse_hooks({event: [hook]}, Where("golden"), base_dir=workdir)
    return HookEngine(config, session_id="0f9c2a7e5b6d4c3a", project_dir=CWD)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_reply_form(tmp_path: Path, run_hooks: RunHooks, form: str) -> None:
    event, code, reply = FORMS[form]
    text = reply if isinstance(reply, str) else json.dumps(reply)
    stream = ">&2" if code else ""
    (tmp_path / "reply").write_text(text)
    engine = engine_for(event, ["sh", "-c", f"cat {tmp_path / 'reply'} {stream}; exit {code}"],
                        tmp_path)  # fmt: skip
    outcome = run_hooks(engine, event, SAMPLES[event])
    check_golden(GOLDEN / f"{form}.outcome.json", outcome_document(outcome))


@pytest.mark.parametrize("form", sorted(f for f, (_, code, r) in FORMS.items() if code == 0
                                        and isinstance(r, dict)))  # fmt: skip
def test_every_json_form_validates_against_the_reply_schema(form: str) -> None:
    event, _, reply = FORMS[form]
    valid = jsonschema.Draft202012Validator(schema_for(event, "claude", "reply")).is_valid(reply)
    assert valid == (form != "wrong-event-name")


#: hookgate arguments and the tool_input Claude Code gives the same call.
TOOLS: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    ("shell", {"command": "ls", "timeout": 1.5}, "Bash", {"command": "ls", "timeout": 1500}),
    ("read_file", {"path": "src/a.py", "offset": 3, "limit": 10}, "Read",
     {"file_path": f"{CWD}/src/a.py", "offset": 3, "limit": 10}),
    ("write_file", {"path": "a.txt", "content": "x"}, "Write",
     {"file_path": f"{CWD}/a.txt", "content": "x"}),
    ("edit_file", {"path": "/etc/x", "old_string": "a", "new_string": "b", "replace_all": True},
     "Edit", {"file_path": "/etc/x", "old_string": "a", "new_string": "b", "replace_all": True}),
    ("list_files", {"pattern": "**/*.py", "path": "src"}, "Glob",
     {"pattern": "**/*.py", "path": f"{CWD}/src"}),
    ("grep", {"pattern": "TODO", "glob": "*.py", "ignore_case": True}, "Grep",
     {"pattern": "TODO", "glob": "*.py", "-i": True}),
    ("ask_agent", {"agent": "reviewer", "question": "ok?", "with_context": True}, "Agent",
     {"prompt": "ok?", "subagent_type": "reviewer", "description": "ask reviewer"}),
    ("mcp__docs__search", {"q": "x"}, "mcp__docs__search", {"q": "x"}),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "ours", "name", "theirs"), TOOLS)
def test_tools_map_both_ways(tool: str, ours: dict[str, Any], name: str,
                             theirs: dict[str, Any]) -> None:  # fmt: skip
    assert FORMATS["claude"].match_name(tool) == name
    assert claude_input(tool, ours, CWD) == theirs
    assert arguments_from_claude(tool, theirs, ours, CWD) == ours


def test_a_changed_path_and_timeout_map_back() -> None:
    back = arguments_from_claude(
        "shell", {"command": "ls", "timeout": 30000}, {"command": "ls"}, CWD
    )
    assert back == {"command": "ls", "timeout": 30.0}
    back = arguments_from_claude("read_file", {"file_path": "/tmp/x"}, {"path": "a"}, CWD)
    assert back == {"path": "/tmp/x"}


@pytest.mark.parametrize(
    ("matcher", "matches", "misses"),
    [("Bash", ["shell"], ["grep"]),
     ("Edit|Write", ["edit_file", "write_file"], ["shell"]),
     ("Edit, Write", ["edit_file"], ["read_file"]),
     ("Task", ["ask_agent"], ["shell"]),
     ("Edit.*", ["edit_file"], ["write_file"]),
     ("mcp__docs__.*", ["mcp__docs__search"], ["mcp__git__log"]),
     ("Bas", [], ["shell"])],
)  # fmt: skip
def test_claude_matchers(matcher: str, matches: list[str], misses: list[str]) -> None:
    pattern = compile_claude_matcher(matcher)
    assert pattern is not None
    name = FORMATS["claude"].match_name
    assert all(pattern.search(name(tool)) for tool in matches)
    assert not any(pattern.search(name(tool)) for tool in misses)


@pytest.mark.parametrize("matcher", ["", "*"])
def test_empty_and_star_match_everything(matcher: str) -> None:
    assert compile_claude_matcher(matcher) is None


def test_events_claude_has_no_name_for_are_refused() -> None:
    assert not FORMATS["claude"].supports(EVENTS["preAsk"])


@pytest.mark.parametrize("timeout", [10**400, float("inf"), float("nan"), -1, "30", None, True])
def test_a_hostile_timeout_cannot_make_a_claude_guard_fail_open(
    tmp_path: Path, run_hooks: RunHooks, timeout: Any
) -> None:
    """The model's arguments reach the guard unvalidated: nothing in them may break the
    encoding, or the guard would fail (open, under the default onError: warn)."""
    guard = "grep -q 'rm -rf' && { echo no >&2; exit 2; }; exit 0"
    engine = engine_for("preToolCall", ["sh", "-c", guard], tmp_path)
    arguments = {"command": "rm -rf /", "timeout": timeout}
    outcome = run_hooks(engine, "preToolCall", {"tool": "shell", "arguments": arguments})
    assert outcome.errors == ()
    assert outcome.blocked
