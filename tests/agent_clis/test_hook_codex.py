"""`hookgate hook codex`: Claude Code's protocol, less what Codex refuses from a hook."""

from __future__ import annotations

import json

from agent_clis.conftest import REWRITTEN, answer, bash, claude_event
from runtime.project import Project


def test_a_rewrite_comes_with_the_allow_codex_requires(project: Project) -> None:
    event = claude_event(project, "PreToolUse", **bash("echo hello > note.txt"))
    specific = answer(project, "codex", event)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "allow"
    assert specific["updatedInput"]["command"] == f"echo {REWRITTEN} > note.txt"


def test_an_ask_is_denied_and_an_allow_left_to_codex(project: Project) -> None:
    # Claude-format hooks: hookgate's native replies say no permission.
    decide = '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "%s"}}'
    ask = project.hook("ask.sh", f"echo '{decide % 'ask'}'")
    allow = project.hook("allow.sh", f"echo '{decide % 'allow'}'")
    hooks = {"preToolCall": [
        {"matcher": "Bash", "command": ask, "format": "claude"},
        {"matcher": "Read", "command": allow, "format": "claude"},
    ]}  # fmt: skip
    project.agent_file.write_text(json.dumps({"hooks": hooks}))
    project.trust()
    asked = answer(project, "codex", claude_event(project, "PreToolUse", **bash("make")))
    assert asked["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "cannot ask" in asked["hookSpecificOutput"]["permissionDecisionReason"]
    read = claude_event(project, "PreToolUse", tool_name="Read",
                        tool_input={"file_path": "/etc/hostname"}, tool_use_id="t2")  # fmt: skip
    assert answer(project, "codex", read) == {}  # Codex takes no plain allow
    assert answer(project, "claude", read)["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_a_replaced_result_is_a_block_the_model_reads(project: Project) -> None:
    scrub = project.hook("scrub.sh", "jq -c '{result: {content: \"[scrubbed]\", is_error: false}}'")
    project.agent_file.write_text(json.dumps({"hooks": {"postToolCall": [{"command": scrub}]}}))
    project.trust()
    event = claude_event(project, "PostToolUse", **bash("cat .env"),
                         tool_response={"stdout": "KEY=1", "stderr": ""})  # fmt: skip
    reply = answer(project, "codex", event)
    assert "hookSpecificOutput" not in reply
    assert reply["decision"] == "block"
    assert "[scrubbed]" in reply["reason"]
