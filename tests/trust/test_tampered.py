"""A file a guard runs that changes during a session blocks the guarded call, whatever
the guard's `onError` says, for every kind of hook that runs a pinned file (issue 29).

The change comes from a `postToolCall` hook the repository ships: a route no sandbox
of the model's shell closes (hooks run outside it). The model then asks for a shell
call the guard would judge; under `onError: warn` it used to run with a notice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runtime.project import Project

SECRET = "SECRET-CONTENT"


def guard_of(kind: str, project: Project) -> tuple[dict[str, Any], Path]:
    """A preToolCall guard of `kind` that allows everything, and the file it runs."""
    if kind == "process":
        return {"command": project.hook("guard.sh", "exit 0")}, project.dir / "hooks/guard.sh"
    if kind == "persistent":
        command = project.example("persistent-guard.sh")
        return {"command": command, "persistent": True}, project.dir / command
    if kind == "python module":
        (project.dir / "guard.py").write_text("def check(payload):\n    return None\n")
        return {"python": "guard:check"}, project.dir / "guard.py"
    verdicts = project.dir / "verdicts.yaml"
    verdicts.write_text("[{decision: allow}, {decision: allow}, {decision: allow}]\n")
    return {"model": "scripted:verdicts.yaml", "instructions": "judge it"}, verdicts


@pytest.mark.parametrize("kind", ["process", "persistent", "python module", "checker script"])
def test_a_guard_file_changed_mid_session_blocks_the_call_under_on_error_warn(
    project: Project, kind: str
) -> None:
    guard, file = guard_of(kind, project)
    rewrite = {"matcher": "^read_file$", "command": f"printf '# {SECRET}\\n' >> '{file}'"}
    script = project.script(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "hookgate.yaml"}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "touch built"}}]},
        {"text": "done"},
    )
    hooks = {
        "preToolCall": [{**guard, "matcher": "^shell$", "onError": "warn"}],
        "postToolCall": [rewrite],
    }
    project.write_agent(script, yolo=True, hooks=hooks)

    done = project.hookgate("-p", "read, then build")

    assert done.returncode == 0, done.stderr
    assert SECRET in file.read_text()  # it did change
    assert not (project.dir / "built").exists()
    assert f"{file} changed since the session started" in done.stderr
    shell_result = [m for m in project.messages() if m["role"] == "tool"][1]["content"]
    assert shell_result.startswith("[denied by a hook:")
    assert f"{file} changed since the session started" in shell_result
    assert SECRET not in done.stderr + done.stdout + shell_result


def claude_guard(project: Project) -> Path:
    """A Claude Code project's PreToolUse guard on Bash, `"$CLAUDE_PROJECT_DIR"/…`, which
    allows everything and says so in a log."""
    script = project.dir / ".claude" / "hooks" / "guard.sh"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!/bin/sh\necho ran >> '{project.dir.parent / 'guard.log'}'\n")
    script.chmod(0o755)
    command = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'
    handler = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    settings = {"hooks": {"PreToolUse": [handler]}}
    (project.dir / ".claude" / "settings.json").write_text(json.dumps(settings))
    return script


@pytest.mark.parametrize("changed", [False, True], ids=["unchanged: it runs", "changed: blocks"])
def test_a_claude_projects_guard_runs_as_trusted_and_blocks_once_changed(
    project: Project, changed: bool
) -> None:
    script = claude_guard(project)
    rewrite = {"matcher": "^read_file$", "command": f"printf '# {SECRET}\\n' >> '{script}'"}
    replies = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "hookgate.yaml"}}]}]
    replies = replies if changed else []
    script_file = project.script(
        *replies,
        {"tool_calls": [{"name": "shell", "arguments": {"command": "touch built"}}]},
        {"text": "done"},
    )
    project.write_agent(
        script_file, yolo=True, claude_settings=[".claude/settings.json"],
        hooks={"postToolCall": [rewrite]},
    )  # fmt: skip

    done = project.hookgate("-p", "build")

    assert done.returncode == 0, done.stderr
    assert (project.dir / "built").exists() is not changed
    log = project.dir.parent / "guard.log"
    assert (log.read_text().splitlines() if log.exists() else []) == ([] if changed else ["ran"])
    assert (f"{script} changed since the session started" in done.stderr) is changed


def test_an_unchanged_guard_under_on_error_warn_still_lets_the_call_run(project: Project) -> None:
    """The control: the same session without the change builds."""
    guard, _ = guard_of("process", project)
    script = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "touch built"}}]},
        {"text": "done"},
    )
    hooks = {"preToolCall": [{**guard, "matcher": "^shell$", "onError": "warn"}]}
    project.write_agent(script, yolo=True, hooks=hooks)

    done = project.hookgate("-p", "build")

    assert done.returncode == 0, done.stderr
    assert (project.dir / "built").exists()
