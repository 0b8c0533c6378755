"""`claude_settings:` in a config file: Claude Code's settings files as hooks.

Run as a user runs them: `hookgate hooks check | fire` as subprocesses, with `$HOME`
pointing at a scratch home so that `~/.claude/settings.json` is the test's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookgate.config.agentfile import Permissions, load_agent_file
from hookgate.hooks import ConfigError
from hooks.test_claude_cli import GUARD
from hooks.test_cli import write
from support.hook_server import Answer, HookServer

HOOKGATE = [sys.executable, "-m", "hookgate.cli"]


def run(
    *args: str, cwd: Path, home: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [*HOOKGATE, *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60,
        env=env,
    )  # fmt: skip


def settings(path: Path, hooks: dict[str, Any], **extra: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"$schema": "https://json.schemastore.org/claude-code-settings.json",
                                "hooks": hooks, **extra}, indent=2))  # fmt: skip


def pre_tool_use(command: str, matcher: str = "Bash") -> dict[str, Any]:
    return {
        "PreToolUse": [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    write(directory / "guard.py", GUARD, executable=True)
    write(directory / "agent.yaml", "model: scripted:none.yaml\nclaude_settings: true\n")
    return directory


def test_fire_denies_through_a_project_settings_file(project: Path, tmp_path: Path) -> None:
    settings(project / ".claude" / "settings.json", pre_tool_use("./guard.py"))
    done = run("hooks", "fire", "PreToolUse", "--tool", "shell", "--config", "agent.yaml",
               cwd=project, home=tmp_path, stdin='{"command": "rm -rf /"}')  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["reason"] == "refusing 'rm -rf /'"


def test_the_three_files_merge_in_order_and_identical_commands_run_once(
    project: Path, tmp_path: Path
) -> None:
    settings(tmp_path / ".claude" / "settings.json", pre_tool_use("echo user"))
    settings(project / ".claude" / "settings.json", pre_tool_use("echo project"))
    settings(project / ".claude" / "settings.local.json",
             {**pre_tool_use("echo project"), **pre_tool_use("echo local")})  # fmt: skip
    done = run("hooks", "check", "--config", "agent.yaml", cwd=project, home=tmp_path)
    assert done.returncode == 0, done.stderr
    order = [line for line in done.stdout.splitlines() if "'echo " in line]
    assert [line.split("'")[1] for line in order] == ["echo user", "echo project", "echo local"]
    assert "[.claude/settings.json:" in done.stdout


def test_an_http_handler_posts_to_its_policy_service(project: Path, tmp_path: Path) -> None:
    """Claude's `type: http` with `allowedEnvVars` is an http hook: the header is sent."""
    handler = {"type": "http", "url": "", "headers": {"Authorization": "Bearer $POLICY_TOKEN"},
               "allowedEnvVars": ["POLICY_TOKEN"]}  # fmt: skip
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "the service says no"}}  # fmt: skip
    with HookServer() as server:
        server.queue(Answer.reply(deny))
        handler["url"] = server.url
        settings(project / ".claude" / "settings.json",
                 {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]})  # fmt: skip
        done = run("hooks", "fire", "PreToolUse", "--tool", "shell", "--config", "agent.yaml",
                   cwd=project, home=tmp_path, stdin='{"command": "rm -rf /"}',
                   env={"POLICY_TOKEN": "t0ken"})  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["reason"] == "the service says no"
    (posted,) = server.requests
    assert posted.headers["authorization"] == "Bearer t0ken"
    assert posted.json()["tool_input"] == {"command": "rm -rf /"}


def test_disable_all_hooks_turns_them_off(project: Path, tmp_path: Path) -> None:
    settings(project / ".claude" / "settings.json", pre_tool_use("./guard.py"))
    settings(project / ".claude" / "settings.local.json", {}, disableAllHooks=True)
    done = run("hooks", "fire", "PreToolUse", "--tool", "shell", "--config", "agent.yaml",
               cwd=project, home=tmp_path, stdin='{"command": "rm -rf /"}')  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hooks_run"] == 0


def test_check_lists_what_never_fires_here_with_the_reason(project: Path, tmp_path: Path) -> None:
    settings(project / ".claude" / "settings.json", {
        "SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "prompt", "prompt": "Is this safe?"},
            {"type": "command", "command": "echo git", "if": "Bash(git *)"},
            {"type": "command", "command": "echo runs", "statusMessage": "checking"}]}],
    })  # fmt: skip
    done = run("hooks", "check", "--config", "agent.yaml", cwd=project, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "SessionEnd never fires here (hookgate has no session-end hook yet)" in done.stdout
    assert "type 'prompt' is not supported here; this hook never fires" in done.stdout
    assert "the 'if' filter 'Bash(git *)' is not supported here" in done.stdout
    assert "'echo runs'" in done.stdout


def test_invalid_json_is_a_config_error_with_line_and_column(project: Path, tmp_path: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "hooks": {\n    "PreToolUse": [,]\n  }\n}\n')
    done = run("hooks", "check", "--config", "agent.yaml", cwd=project, home=tmp_path)
    assert done.returncode == 1
    assert ".claude/settings.json: not valid JSON at line 3, column 20" in done.stderr
    assert "Traceback" not in done.stderr


def test_json_nested_past_the_decoders_limit_is_a_config_error(
    project: Path, tmp_path: Path
) -> None:
    """A repository's settings file is read before anything is trusted: ten thousand
    nested brackets raised a RecursionError traceback from `hookgate trust`."""
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("[" * 10_000 + "]" * 10_000)
    for args in (["hooks", "check", "--config", "agent.yaml"], ["trust", "agent.yaml"]):
        done = run(*args, cwd=project, home=tmp_path)
        assert done.returncode == 1
        assert ".claude/settings.json: nested too deeply to read" in done.stderr
        assert "Traceback" not in done.stderr


def test_a_listed_file_that_does_not_exist_is_named(project: Path, tmp_path: Path) -> None:
    write(project / "agent.yaml", "model: scripted:none.yaml\nclaude_settings: [nope.json]\n")
    done = run("hooks", "check", "--config", "agent.yaml", cwd=project, home=tmp_path)
    assert done.returncode == 1
    assert "agent.yaml:2: claude_settings[0]:" in done.stderr
    assert "nope.json' is not a file" in done.stderr


def test_a_listed_file_is_read_instead_of_the_defaults(project: Path, tmp_path: Path) -> None:
    settings(project / ".claude" / "settings.json", pre_tool_use("echo default"))
    settings(project / "team.json", pre_tool_use("./guard.py", matcher="Edit|Bash"))
    write(project / "agent.yaml", "model: scripted:none.yaml\nclaude_settings: [team.json]\n")
    done = run("hooks", "check", "--config", "agent.yaml", cwd=project, home=tmp_path)
    assert "./guard.py" in done.stdout
    assert "echo default" not in done.stdout


def test_import_claude_prints_the_equivalent_hooks_block(project: Path, tmp_path: Path) -> None:
    settings(project / ".claude" / "settings.json", {
        **pre_tool_use("./guard.py", matcher="Edit|Bash"),
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo hi", "timeout": 5}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye"}]}],
    })  # fmt: skip
    done = run("hooks", "import-claude", str(project), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "# not imported:" in done.stdout
    assert "SessionEnd never fires here" in done.stdout
    # The block it prints is a working config: pasted, it denies like the settings file.
    write(project / "hookgate.yaml", "model: scripted:none.yaml\n" + done.stdout)
    fired = run("hooks", "fire", "PreToolUse", "--tool", "shell", cwd=project, home=tmp_path,
                stdin='{"command": "rm -rf /"}')  # fmt: skip
    assert fired.returncode == 2, fired.stderr
    checked = run("hooks", "check", cwd=project, home=tmp_path)
    assert "format claude, timeout 5s" in checked.stdout


def test_import_claude_writes_the_permissions_too(project: Path, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    settings(project / ".claude" / "settings.json", {}, permissions={
        "allow": ["Bash(npm test:*)", "WebFetch(domain:docs.example.com)"],
        "deny": ["Bash(curl:*)", "Read(./secrets/**)"], "ask": ["Edit"],
        "additionalDirectories": ["../docs"],
    })  # fmt: skip
    done = run("hooks", "import-claude", str(project), cwd=tmp_path, home=tmp_path)
    assert done.returncode == 0, done.stderr
    write(project / "hookgate.yaml", "model: scripted:none.yaml\n" + done.stdout)
    config = load_agent_file(project / "hookgate.yaml")
    assert config.permissions == Permissions(
        allow=("shell(npm test)", "shell(npm test *)", "web_fetch(domain:docs.example.com)"),
        deny=("shell(curl)", "shell(curl *)", "read_file(secrets/**)"),
        ask=("edit_file", "write_file"),
    )
    assert config.workspace_dirs == ((tmp_path / "docs").resolve(),)

    settings(project / ".claude" / "settings.json", {}, permissions={"deny": ["NotebookEdit"]})
    refused = run("hooks", "import-claude", str(project), cwd=tmp_path, home=tmp_path)
    assert refused.returncode == 1
    assert "settings.json:" in refused.stderr
    assert "Claude Code's deny rule 'NotebookEdit' cannot be mapped" in refused.stderr


def test_the_agent_files_ask_list_is_checked_like_the_others(tmp_path: Path) -> None:
    agent = tmp_path / "hookgate.yaml"
    write(agent, "model: scripted:none.yaml\npermissions:\n  ask: shell(rm *)\n")
    with pytest.raises(ConfigError) as error:
        load_agent_file(agent)
    assert "hookgate.yaml:3" in str(error.value)
    assert "permissions.ask" in str(error.value)
    assert "expected a list of strings" in str(error.value)
    write(agent, "model: scripted:none.yaml\npermissions:\n  ask: [shell(rm *)]\n")
    assert load_agent_file(agent).permissions.ask == ("shell(rm *)",)


def test_import_claude_without_settings_says_so(tmp_path: Path) -> None:
    done = run("hooks", "import-claude", cwd=tmp_path, home=tmp_path)
    assert done.returncode == 1
    assert "no .claude/settings.json or .claude/settings.local.json" in done.stderr


@pytest.mark.parametrize(
    "hooks",
    [
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n"
        "        - {type: command, command: ./guard.py}\n",
        "hooks:\n  hooks:\n    PreToolUse: []\n",
    ],
)
def test_a_pasted_claude_block_says_what_it_is(project: Path, tmp_path: Path, hooks: str) -> None:
    write(project / "agent.yaml", "model: scripted:none.yaml\n" + hooks)
    done = run("hooks", "check", "--config", "agent.yaml", cwd=project, home=tmp_path)
    assert done.returncode == 1
    assert "Claude Code settings" in done.stderr
    assert "format: claude" in done.stderr
    assert "claude_settings: true" in done.stderr
