"""`hookgate hook gemini`, run for real on Gemini CLI's hook input."""

from __future__ import annotations

import json
from typing import Any

from agent_clis.conftest import GUARD_REASON, REWRITTEN, answer
from runtime.project import Project


def gemini_event(project: Project, event: str, **fields: Any) -> str:
    common = {"session_id": "g-1", "transcript_path": str(project.dir / "t.jsonl"),
              "cwd": str(project.dir), "hook_event_name": event,
              "timestamp": "2026-12-01T00:00:00Z"}  # fmt: skip
    return json.dumps({**common, **fields})


def shell(command: str) -> dict[str, Any]:
    return {"tool_name": "run_shell_command", "tool_input": {"command": command, "dir_path": "."}}


def test_the_guard_denies_and_the_rewrite_keeps_gemini_names(project: Project) -> None:
    denied = answer(project, "gemini", gemini_event(project, "BeforeTool", **shell("rm -rf build")))
    assert denied["decision"] == "deny"
    assert GUARD_REASON in denied["reason"]
    rewritten = answer(
        project, "gemini", gemini_event(project, "BeforeTool", **shell("echo hello"))
    )
    assert rewritten == {"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {
        "command": f"echo {REWRITTEN}", "dir_path": "."}}}  # fmt: skip


def test_a_replaced_result_is_the_reason_gemini_sends_instead(project: Project) -> None:
    scrub = project.hook("scrub.sh", "jq -c '{result: {content: \"[scrubbed]\", is_error: false}}'")
    hooks = {"postToolCall": [{"matcher": "^shell$", "command": scrub}]}
    project.agent_file.write_text(json.dumps({"hooks": hooks}))
    project.trust()
    event = gemini_event(project, "AfterTool", **shell("cat .env"),
                         tool_response={"llmContent": "KEY=1", "returnDisplay": "KEY=1"})  # fmt: skip
    assert answer(project, "gemini", event) == {"decision": "deny", "reason": "[scrubbed]"}


def test_a_question_a_hook_rewrote_is_blocked(project: Project) -> None:
    shout = project.hook("shout.sh", "jq -c '{prompt: (.prompt | ascii_upcase)}'")
    project.agent_file.write_text(json.dumps({"hooks": {"preGeneration": [{"command": shout}]}}))
    project.trust()
    reply = answer(project, "gemini", gemini_event(project, "BeforeAgent", prompt="hi"))
    assert reply["decision"] == "deny"
    assert "Gemini CLI cannot send a rewritten question" in reply["reason"]


def test_an_untrusted_file_denies_a_guarded_call(project: Project) -> None:
    project.hookgate("trust", "--revoke", str(project.agent_file), trusted=False)
    reply = answer(project, "gemini", gemini_event(project, "BeforeTool", **shell("ls")))
    assert reply["decision"] == "deny"
    assert "is not trusted" in reply["reason"]
