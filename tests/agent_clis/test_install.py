"""`hookgate install AGENT`: the agent's own settings merged, others' entries kept,
idempotent, undone by `--uninstall`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hookgate.agents import relay
from runtime.project import HOOKGATE, RUN_TIMEOUT, Project

#: A Claude Code settings file as users have them: other keys, another hook on an event
#: hookgate answers too, and a hook on one it does not.
THEIRS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


def _install(project: Project, *args: str, home: Path | None = None) -> str:
    env = project.env(HOME=str(home)) if home else None
    done = project.hookgate("install", *args, "--yes", trusted=False, env=env)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_install_claude_merges_keeps_the_rest_and_is_idempotent(project: Project) -> None:
    settings = project.dir / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(THEIRS, indent=2) + "\n")
    _install(project, "claude")
    merged = json.loads(settings.read_text())
    assert merged["$schema"] == THEIRS["$schema"]
    assert merged["permissions"] == THEIRS["permissions"]
    assert merged["hooks"]["Notification"] == THEIRS["hooks"]["Notification"]
    pre = merged["hooks"]["PreToolUse"]
    assert pre[0] == THEIRS["hooks"]["PreToolUse"][0]  # theirs first, as it was
    assert pre[1]["matcher"] == "*"
    assert pre[1]["hooks"][0]["command"] == f"{HOOKGATE} hook claude"
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"):
        (entry,) = merged["hooks"][event]
        assert entry["hooks"][0]["command"] == f"{HOOKGATE} hook claude"
    written = settings.read_bytes()
    assert "already installed" in _install(project, "claude")
    assert settings.read_bytes() == written
    _install(project, "claude", "--uninstall")
    assert json.loads(settings.read_text()) == THEIRS


def test_install_names_the_agent_file_and_replaces_its_old_entry(project: Project) -> None:
    _install(project, "claude")
    _install(project, "claude", "--agent", "hookgate.yaml")
    hooks = json.loads((project.dir / ".claude" / "settings.json").read_text())["hooks"]
    (entry,) = hooks["PreToolUse"]
    assert entry["hooks"][0]["command"] == (f"{HOOKGATE} hook claude --agent {project.agent_file}")


def test_install_user_writes_the_users_settings(project: Project, tmp_path: Path) -> None:
    home = tmp_path / "user"
    _install(project, "claude", "--user", home=home)
    assert "Stop" in json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert not (project.dir / ".claude").exists()


def test_install_refuses_a_settings_file_it_cannot_read(project: Project) -> None:
    settings = project.dir / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {\n  "Stop": [,]\n}}\n')
    done = project.hookgate("install", "claude", "--yes", trusted=False)
    assert done.returncode == 1
    assert f"{settings}:2:" in done.stderr
    assert "not valid JSON" in done.stderr
    assert settings.read_text() == '{"hooks": {\n  "Stop": [,]\n}}\n'


def test_install_codex_writes_hooks_json_beside_its_config(
    project: Project, tmp_path: Path
) -> None:
    _install(project, "codex")
    hooks = json.loads((project.dir / ".codex" / "hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == f"{HOOKGATE} hook codex"
    codex_home = tmp_path / "codex-home"
    env = project.env(CODEX_HOME=str(codex_home))
    done = project.hookgate("install", "codex", "--user", "--yes", trusted=False, env=env)
    assert done.returncode == 0, done.stderr
    assert "trust" in done.stderr  # what the user must still approve in Codex
    assert "Stop" in json.loads((codex_home / "hooks.json").read_text())["hooks"]


def test_install_gemini_names_its_hook_and_times_it_in_milliseconds(project: Project) -> None:
    _install(project, "gemini")
    hooks = json.loads((project.dir / ".gemini" / "settings.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"}
    (entry,) = hooks["BeforeTool"]
    assert "matcher" not in entry  # every tool
    assert entry["hooks"] == [{"name": "hookgate", "type": "command",
                               "command": f"{HOOKGATE} hook gemini", "timeout": 600_000}]  # fmt: skip


def test_install_resident_writes_the_relay_and_replaces_the_plain_command(
    project: Project,
) -> None:
    _install(project, "claude")
    _install(project, "claude", "--resident")
    hooks = json.loads((project.dir / ".claude" / "settings.json").read_text())["hooks"]
    (entry,) = hooks["PreToolUse"]
    assert entry["hooks"][0]["command"] == f"{sys.executable} -S {relay.__file__} claude"
    _install(project, "claude", "--uninstall")
    assert not (project.dir / ".claude" / "settings.json").read_text().strip("{}\n")


@pytest.mark.parametrize(("typed", "written"), [("y", True), ("n", False)])
def test_install_on_a_terminal_shows_the_diff_and_asks(
    project: Project, typed: str, written: bool
) -> None:
    settings = project.dir / ".claude" / "settings.json"
    main, child = os.openpty()
    with subprocess.Popen(
        [str(HOOKGATE), "install", "claude"], cwd=project.dir, env=project.env(),
        stdin=child, stdout=subprocess.PIPE, stderr=child, text=True,
    ) as done:  # fmt: skip
        os.close(child)
        shown = _read_until(main, b"? [y/N] ")
        os.write(main, typed.encode() + b"\n")
        assert done.wait(timeout=RUN_TIMEOUT) == (0 if written else 1)
    os.close(main)
    assert b"+++ " in shown
    assert b"hook claude" in shown
    assert settings.exists() == written


def _read_until(fd: int, end: bytes) -> bytes:
    seen = b""
    while not seen.endswith(end):
        chunk = os.read(fd, 4096)
        assert chunk, seen
        seen += chunk
    return seen
