"""`hookgate hook claude`, run for real on Claude Code's hook input: the decision in
Claude Code's protocol, failing closed, and each Claude session in hookgate's history."""

from __future__ import annotations

import json
from pathlib import Path

from agent_clis.conftest import GUARD_REASON, REWRITTEN, answer, bash, claude_event
from runtime.project import Project


def test_the_shell_guard_denies_rm_rf_with_its_reason(project: Project) -> None:
    reply = answer(project, "claude", claude_event(project, "PreToolUse", **bash("rm -rf build")))
    specific = reply["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "deny"
    assert GUARD_REASON in specific["permissionDecisionReason"]


def test_a_rewrite_is_the_whole_input_in_claude_names(project: Project) -> None:
    event = claude_event(project, "PreToolUse", **bash("echo hello > note.txt"))
    specific = answer(project, "claude", event)["hookSpecificOutput"]
    assert "permissionDecision" not in specific  # a rewrite is no consent
    assert specific["updatedInput"] == {
        "command": f"echo {REWRITTEN} > note.txt",
        "description": "run",  # what hookgate has no name for is kept
    }


def test_a_call_no_hook_touches_gets_no_decision(project: Project) -> None:
    event = claude_event(project, "PreToolUse", tool_name="Read",
                         tool_input={"file_path": str(project.dir / "a.txt")}, tool_use_id="t9")  # fmt: skip
    assert answer(project, "claude", event) == {}


def test_an_edited_agent_file_fails_closed_with_the_reason(project: Project) -> None:
    project.agent_file.write_text(project.agent_file.read_text() + "\n# edited\n")
    reply = answer(project, "claude", claude_event(project, "PreToolUse", **bash("ls")))
    specific = reply["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "changed since you trusted it" in specific["permissionDecisionReason"]
    assert "hookgate trust" not in json.dumps(reply) or "not trusted" in json.dumps(reply)


def test_an_untrusted_file_fails_closed_only_where_a_guard_must_not_fail_open(
    project: Project,
) -> None:
    project.hookgate("trust", "--revoke", str(project.agent_file), trusted=False)
    shell = answer(project, "claude", claude_event(project, "PreToolUse", **bash("ls")))
    assert shell["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "is not trusted" in shell["hookSpecificOutput"]["permissionDecisionReason"]
    # No fail-closed hook on Read (the guard's matcher is ^shell$): a notice, the call goes on.
    read = answer(project, "claude", claude_event(project, "PreToolUse", tool_name="Read",
                  tool_input={"file_path": "/etc/hostname"}, tool_use_id="t2"))  # fmt: skip
    assert "hookSpecificOutput" not in read
    assert "is not trusted" in read["systemMessage"]


def test_a_broken_agent_file_fails_closed(project: Project) -> None:
    project.agent_file.write_text("hooks: [not, a, mapping\n")
    reply = answer(project, "claude", claude_event(project, "UserPromptSubmit", prompt="hi"))
    assert reply["decision"] == "block"
    assert "hookgate.yaml" in reply["reason"]


def test_without_an_agent_file_nothing_is_decided(project: Project) -> None:
    project.agent_file.unlink()
    assert (
        answer(project, "claude", claude_event(project, "PreToolUse", **bash("rm -rf build"))) == {}
    )


def test_a_prompt_block_and_a_prompt_rewrite_both_block(project: Project) -> None:
    block = project.hook("no-secrets.sh", "grep -q password && "
                         "echo '{\"action\": \"block\", \"reason\": \"holds a password\"}' || true")  # fmt: skip
    rewrite = project.hook("shout.sh", "jq -c '{prompt: (.prompt | ascii_upcase)}'")
    hooks = {"preGeneration": [{"command": block}, {"command": rewrite}]}
    project.agent_file.write_text(json.dumps({"hooks": hooks}))
    project.trust()
    blocked = answer(
        project, "claude", claude_event(project, "UserPromptSubmit", prompt="password=1")
    )
    assert blocked == {"decision": "block", "reason": "holds a password"}
    rewritten = answer(project, "claude", claude_event(project, "UserPromptSubmit", prompt="hi"))
    assert rewritten["decision"] == "block"  # Claude Code cannot send another question
    assert "HI" in rewritten["reason"]


def test_a_stop_hook_sends_claude_back_with_the_instruction(project: Project) -> None:
    # A Claude-format Stop hook in hookgate.yaml, as a Claude Code user already has one.
    again = project.hook("again.sh", "jq -e '.stop_hook_active' >/dev/null && exit 0; "
                         "echo '{\"decision\": \"block\", \"reason\": \"run the tests\"}'")  # fmt: skip
    hooks = {"postGeneration": [{"command": again, "format": "claude"}]}
    project.agent_file.write_text(json.dumps({"hooks": hooks}))
    project.trust()
    first = claude_event(project, "Stop", stop_hook_active=False, last_assistant_message="done")
    assert answer(project, "claude", first) == {"decision": "block", "reason": "run the tests"}
    second = claude_event(project, "Stop", stop_hook_active=True, last_assistant_message="done")
    assert answer(project, "claude", second) == {}


def test_a_replaced_result_is_claude_shaped(project: Project) -> None:
    scrub = project.hook("scrub.sh", "jq -c '{result: {content: \"[scrubbed]\", is_error: false}}'")
    hooks = {"postToolCall": [{"matcher": "^shell$", "command": scrub}]}
    project.agent_file.write_text(json.dumps({"hooks": hooks}))
    project.trust()
    event = claude_event(project, "PostToolUse", **bash("cat .env"),
                         tool_response={"stdout": "KEY=1", "stderr": "", "interrupted": False})  # fmt: skip
    specific = answer(project, "claude", event)["hookSpecificOutput"]
    assert specific["updatedToolOutput"] == {"stdout": "[scrubbed]", "stderr": "",
                                             "interrupted": False}  # fmt: skip


def test_each_claude_session_is_a_hookgate_session(project: Project) -> None:
    for stdin in (
        claude_event(project, "SessionStart", source="startup"),
        claude_event(project, "UserPromptSubmit", prompt="tidy up"),
        claude_event(project, "PreToolUse", **bash("rm -rf build", "toolu_1")),
        claude_event(project, "PreToolUse", **bash("echo hello > note.txt", "toolu_2")),
        claude_event(project, "PostToolUse", **bash("echo hello > note.txt", "toolu_2"),
                     tool_response={"stdout": "", "stderr": "", "interrupted": False}),
        claude_event(project, "Stop", stop_hook_active=False, last_assistant_message="Done."),
        claude_event(project, "UserPromptSubmit", session="other", prompt="elsewhere"),
    ):  # fmt: skip
        answer(project, "claude", stdin)
    listed = project.hookgate("sessions", trusted=False).stdout
    assert "-claude-sess-1 " in listed
    assert "tidy up" in listed
    assert "-claude-other " in listed
    (path,) = [p for p in project.session_files() if p.stem.endswith("-claude-sess-1")]
    assert path.stat().st_mode & 0o077 == 0  # as private as hookgate's own
    messages = project.messages(path)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool",
                                             "assistant"]  # fmt: skip
    assert GUARD_REASON in messages[2]["content"]
    assert messages[3]["tool_calls"][0]["arguments"] == {"command": f"echo {REWRITTEN} > note.txt"}
    assert messages[-1]["content"] == "Done."
    decisions = [r["data"] for r in project.records(path) if r.get("kind") == "agent_hook"]
    assert [d["event"] for d in decisions] == ["SessionStart", "UserPromptSubmit", "PreToolUse",
                                               "PreToolUse", "PostToolUse", "Stop"]  # fmt: skip
    assert decisions[2]["decision"] == "blocked"
    assert decisions[2]["blocked_by"] == "no-rm-rf"


def test_a_hooks_only_agent_file_is_valid_for_check_and_trust(project: Project) -> None:
    checked = project.hookgate("hooks", "check", trusted=False)
    assert checked.returncode == 0, checked.stderr
    assert "2 hooks" in checked.stdout
    trusted = project.hookgate("trust", "--yes", trusted=False)
    assert trusted.returncode == 0, trusted.stderr
    assert "model: none" in trusted.stderr
    session = project.hookgate("-p", "hi", trusted=False)
    assert session.returncode == 1
    assert "no 'model' key" in session.stderr


def test_a_deny_rule_of_the_file_denies_the_call_after_the_hooks(project: Project) -> None:
    project.agent_file.write_text(json.dumps({"permissions": {"deny": ["shell(git push *)"]}}))
    project.trust()
    pushed = claude_event(project, "PreToolUse", **bash("git status && git push origin main"))
    specific = answer(project, "claude", pushed)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "'shell(git push *)'" in specific["permissionDecisionReason"]
    assert (
        answer(project, "claude", claude_event(project, "PreToolUse", **bash("git status"))) == {}
    )


def test_a_deny_rule_fires_on_what_it_cannot_read_and_says_why(project: Project) -> None:
    project.agent_file.write_text(json.dumps({"permissions": {"deny": ["shell(git push *)"]}}))
    project.trust()
    piped = claude_event(project, "PreToolUse", **bash("echo 'git push origin main' | bash"))
    specific = answer(project, "claude", piped)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"].endswith(
        "denies it: bash reads the commands it runs from a pipe, which no rule can read"
    )


def test_a_persistent_hook_answers_within_the_event_and_is_gone_after(project: Project) -> None:
    project.example("persistent-guard.sh")
    guard = str(project.dir / "hooks" / "persistent-guard.sh")  # its path names its process
    hook = {"name": "resident-guard", "command": guard, "persistent": True, "onError": "fail"}
    project.agent_file.write_text(json.dumps({"hooks": {"preToolCall": [hook]}}))
    project.trust()
    denied = answer(project, "claude", claude_event(project, "PreToolUse", **bash("rm -rf /")))
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "never run here" in denied["hookSpecificOutput"]["permissionDecisionReason"]
    assert answer(project, "claude", claude_event(project, "PreToolUse", **bash("ls"))) == {}
    assert not _running(guard)  # the engine closed with the event: nothing left running


def _running(path: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if path.encode() in cmdline.read_bytes():
                found.append(cmdline.parent.name)
        except OSError:
            continue  # gone while we looked
    return found


#: A key a stopped prompt holds, and a hook in Claude's words that stops any prompt
#: holding one (`continue: false`: Claude Code never sends it on).
SECRET = "AKIAQWERTYUIOPASDFGH"
STOPPER = (
    "import json, sys\n"
    "event = json.load(sys.stdin)\n"
    "stop = 'AKIA' in event.get('prompt', '')\n"
    "print(json.dumps({'continue': False, 'stopReason': 'it holds a key'} if stop else {}))\n"
)


def test_a_stopped_prompt_is_kept_as_a_blocked_one_is(project: Project, tmp_path: Path) -> None:
    """Its secret appears nowhere afterwards: not in the audit session, `hookgate
    sessions` or the next Stop event's postGeneration hooks."""
    stopper = project.dir / "hooks" / "stop_on_key.py"
    stopper.write_text(STOPPER)
    log = tmp_path / "post.log"
    hooks = {"preGeneration": [{"name": "stopper", "format": "claude",
                                "command": f"python3 {stopper}"}],
             "postGeneration": [project.recorder(log)]}  # fmt: skip
    project.agent_file.write_text(json.dumps({"hooks": hooks}))
    project.trust()

    stopped = answer(project, "claude",
                     claude_event(project, "UserPromptSubmit", prompt=f"deploy {SECRET}"))  # fmt: skip
    answer(project, "claude", claude_event(project, "Stop", stop_hook_active=False))
    listing = project.hookgate("sessions", trusted=False)

    assert stopped.get("continue") is False
    assert [p for p in project.files_under_home() if SECRET.encode() in p.read_bytes()] == []
    assert SECRET not in listing.stdout
    assert "[prompt blocked by a hook: it holds a key]" in log.read_text()
    assert SECRET not in log.read_text()
