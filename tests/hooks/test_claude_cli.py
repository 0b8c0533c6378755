"""`hookgate hooks fire` with a Claude Code hook, as a user moving over runs it."""

from __future__ import annotations

import json
from pathlib import Path

from hooks.test_cli import hookgate, write

#: A Claude Code guard as found in the wild: it reads `.tool_input.command`.
GUARD = """\
    #!/usr/bin/env python3
    import json, sys
    event = json.load(sys.stdin)
    command = event["tool_input"]["command"]
    if event["hook_event_name"] == "PreToolUse" and "rm -rf" in command:
        print(f"refusing {command!r}", file=sys.stderr)
        sys.exit(2)
    """


def test_fire_runs_a_claude_hook_that_reads_tool_input_and_denies(tmp_path: Path) -> None:
    write(tmp_path / "guard.py", GUARD, executable=True)
    write(
        tmp_path / "agent.yaml",
        """\
        model: scripted:none.yaml
        hooks:
          PreToolUse:
            - matcher: Bash
              format: claude
              command: ./guard.py
        """,
    )
    done = hookgate(
        "hooks", "fire", "PreToolUse", "--tool", "shell", "--config", "agent.yaml",
        cwd=tmp_path, stdin='{"command": "rm -rf /"}', check_exit=2,
    )  # fmt: skip
    outcome = json.loads(done.stdout)
    assert outcome["blocked"] is True
    assert outcome["reason"] == "refusing 'rm -rf /'"


def test_a_claude_hook_gets_claude_project_dir(tmp_path: Path) -> None:
    write(
        tmp_path / "hookgate.yaml",
        """\
        hooks:
          PreToolUse:
            - format: claude
              command: 'echo "$CLAUDE_PROJECT_DIR" >&2; exit 2'
        """,
    )
    done = hookgate("hooks", "fire", "PreToolUse", "--tool", "shell", cwd=tmp_path, stdin="{}")
    assert json.loads(done.stdout)["reason"] == str(tmp_path.resolve())


def test_claude_defaults_show_in_check(tmp_path: Path) -> None:
    write(
        tmp_path / "hookgate.yaml",
        """\
        hooks:
          UserPromptSubmit:
            - {format: claude, command: 'true'}
          PreToolUse:
            - {format: claude, command: 'true', matcher: 'Edit|Write'}
        """,
    )
    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=0)
    assert "format claude, timeout 30s, onError warn" in done.stdout
    assert "format claude, timeout 600s, onError warn" in done.stdout


def test_check_warns_about_a_matcher_that_matches_no_offered_tool(tmp_path: Path) -> None:
    write(
        tmp_path / "hookgate.yaml",
        """\
        model: scripted:none.yaml
        tools: [shell, read_file]
        hooks:
          PreToolUse:
            - {format: claude, command: 'true', matcher: 'Edit|Write'}
            - {format: claude, command: 'true', matcher: 'Bash'}
            - {command: 'true', matcher: '^edit_file$'}
        """,
    )
    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=0)
    warnings = [line for line in done.stderr.splitlines() if "matches no tool" in line]
    assert len(warnings) == 2
    assert "(Bash, Read)" in warnings[0]
    assert "(shell, read_file)" in warnings[1]


def test_fire_shows_a_claude_ask(tmp_path: Path) -> None:
    reply = (
        '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", '
        '"permissionDecisionReason": "pushing needs a human"}}'
    )
    write(
        tmp_path / "hookgate.yaml",
        f"""\
        hooks:
          PreToolUse:
            - format: claude
              command: >-
                echo '{reply}'
        """,
    )
    done = hookgate(
        "hooks", "fire", "PreToolUse", "--tool", "shell", cwd=tmp_path, stdin="{}", check_exit=0
    )
    outcome = json.loads(done.stdout)
    assert (outcome["permission"], outcome["stop_reason"]) == ("ask", None)
    assert outcome["permission_reason"] == "pushing needs a human"
    assert outcome["permission_by"].startswith("echo")  # a hook without a name: its command


def test_fire_gives_a_tool_call_an_id_the_same_on_every_run(tmp_path: Path) -> None:
    """A hook that keys on `tool_use_id` (pairing PreToolUse with PostToolUse) can be tried."""
    write(
        tmp_path / "hookgate.yaml",
        """\
        hooks:
          PreToolUse:
            - format: claude
              command: 'jq -r .tool_use_id >&2; exit 2'
        """,
    )

    def fired(*extra: str, stdin: str = '{"command": "ls"}') -> str:
        done = hookgate("hooks", "fire", "PreToolUse", "--tool", "shell", *extra,
                        cwd=tmp_path, stdin=stdin)  # fmt: skip
        return str(json.loads(done.stdout)["reason"])

    made_up = fired()
    assert made_up.startswith("fire_")
    assert fired() == made_up
    assert fired(stdin='{"command": "pwd"}') != made_up
    assert fired("--call-id", "toolu_01ABC") == "toolu_01ABC"
