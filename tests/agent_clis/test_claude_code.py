"""The real Claude Code CLI (`claude -p`, pinned by scripts/install-agent-clis) with
hookgate as its hooks, against a scripted Messages API on loopback: the model asks for
`rm -rf build`, then `echo hello > note.txt`, then answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_clis.conftest import (
    AGENT_CLIS,
    GUARD_REASON,
    REWRITTEN,
    assert_whole_session,
    claude_event,
    wait_for_resident,
)
from agent_clis.mock_anthropic import MockAnthropic, ToolUse
from hookgate.agents import relay
from runtime.project import Project

CLAUDE = AGENT_CLIS / "claude"
#: Seconds one `claude -p` run may take: a scripted session takes a few.
RUN_TIMEOUT = 180
SCRIPT = (
    ToolUse("Bash", {"command": "rm -rf build", "description": "clean the build"}),
    ToolUse("Bash", {"command": "echo hello > note.txt", "description": "write a note"}),
    "Done: the build stays, the note is written.",
)

pytestmark = pytest.mark.skipif(
    not CLAUDE.exists(),
    reason=f"Claude Code is not installed ({CLAUDE}): run scripts/install-agent-clis",
)


def run_claude(
    project: Project, server: MockAnthropic, tmp_path: Path, *install: str
) -> dict[str, Any]:
    """`claude -p` in the project, its hooks installed by `hookgate install claude`
    (with the options `install`)."""
    installed = project.hookgate("install", "claude", *install, "--yes", trusted=False)
    assert installed.returncode == 0, installed.stderr
    env = project.env(
        ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-ant-test",
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"), DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
    )  # fmt: skip
    done = subprocess.run(
        [str(CLAUDE), "-p", "clean up and leave a note", "--allowedTools", "Bash",
         "--output-format", "json"],
        cwd=project.dir, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_claude_code_runs_hookgate_guard_and_rewrite(project: Project, tmp_path: Path) -> None:
    with MockAnthropic(SCRIPT) as server:
        result = run_claude(project, server, tmp_path)
    assert (project.dir / "build").is_dir()  # the guard held
    denied = server.tool_results()[0]
    assert GUARD_REASON in denied  # the model read hookgate's reason
    assert (project.dir / "note.txt").read_text().strip() == REWRITTEN  # the rewrite ran
    assert_whole_session(project, "claude", "clean up and leave a note", str(SCRIPT[-1]), [
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PreToolUse", "PostToolUse", "Stop",
    ])  # fmt: skip
    assert any(p.stem.endswith(result["session_id"]) for p in project.session_files())


def test_claude_code_fails_closed_on_an_edited_agent_file(project: Project, tmp_path: Path) -> None:
    project.agent_file.write_text(project.agent_file.read_text() + "\n# edited, not trusted\n")
    with MockAnthropic(SCRIPT) as server:
        run_claude(project, server, tmp_path)
    assert (project.dir / "build").is_dir()
    assert not (project.dir / "note.txt").exists()  # the second guarded call failed closed too
    first, second = server.tool_results()[:2]
    for result in (first, second):
        assert "must not fail open" in result
        assert "changed since you trusted it" in result


def test_claude_code_through_the_resident_hookgate(
    project: Project, tmp_path: Path, resident_ended: None
) -> None:
    # The resident up first (as after an earlier session), so that it answers every event.
    starter = claude_event(project, "SessionStart", session="earlier", source="startup")
    subprocess.run([sys.executable, "-S", relay.__file__, "claude"], input=starter, text=True,
                   env=project.env(), cwd=project.dir, capture_output=True, check=True)  # fmt: skip
    wait_for_resident(project)
    with MockAnthropic(SCRIPT) as server:
        result = run_claude(project, server, tmp_path, "--resident")
    assert (project.dir / "build").is_dir()
    assert GUARD_REASON in server.tool_results()[0]
    assert (project.dir / "note.txt").read_text().strip() == REWRITTEN
    (path,) = [p for p in project.session_files() if p.stem.endswith(result["session_id"])]
    pids = {r["data"]["pid"] for r in project.records(path) if r.get("kind") == "agent_hook"}
    assert len(pids) == 1  # one process, the resident, answered every event
