"""The real Gemini CLI (`gemini -p`, pinned by scripts/install-agent-clis) with hookgate
as its hooks, against a scripted Gemini API on loopback: the model asks for
`rm -rf build`, then `echo hello > note.txt`, then answers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_clis.conftest import AGENT_CLIS, GUARD_REASON, REWRITTEN, assert_whole_session
from agent_clis.mock_gemini import MockGemini
from agent_clis.scripted import ToolUse
from runtime.project import Project

GEMINI = AGENT_CLIS / "gemini"
#: Seconds one `gemini -p` run may take: a scripted session takes several.
RUN_TIMEOUT = 180
SCRIPT = (
    ToolUse("run_shell_command", {"command": "rm -rf build"}),
    ToolUse("run_shell_command", {"command": "echo hello > note.txt"}),
    "Done: the build stays, the note is written.",
)

pytestmark = pytest.mark.skipif(
    not GEMINI.exists(),
    reason=f"Gemini CLI is not installed ({GEMINI}): run scripts/install-agent-clis",
)


def run_gemini(project: Project, server: MockGemini, tmp_path: Path) -> None:
    """`gemini -p` in the project, its hooks installed by `hookgate install gemini` into
    the user's settings, which already hold the API-key sign-in (kept by the merge)."""
    home = tmp_path / "user"
    (home / ".gemini").mkdir(parents=True)
    sign_in = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(sign_in))
    env = project.env(
        HOME=str(home), GOOGLE_GEMINI_BASE_URL=server.url, GEMINI_API_KEY="test-key",
        GEMINI_CLI_TRUST_WORKSPACE="true", NO_BROWSER="1",
    )  # fmt: skip
    installed = project.hookgate("install", "gemini", "--user", "--yes", trusted=False, env=env)
    assert installed.returncode == 0, installed.stderr
    assert (
        json.loads((home / ".gemini" / "settings.json").read_text())["security"]
        == sign_in["security"]
    )
    done = subprocess.run(
        [str(GEMINI), "-p", "clean up and leave a note", "--yolo"],
        cwd=project.dir, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]


def test_gemini_runs_hookgate_guard_and_rewrite(project: Project, tmp_path: Path) -> None:
    with MockGemini(SCRIPT) as server:
        run_gemini(project, server, tmp_path)
    assert (project.dir / "build").is_dir()
    assert GUARD_REASON in server.tool_results()[0]
    assert (project.dir / "note.txt").read_text().strip() == REWRITTEN
    assert_whole_session(project, "gemini", "clean up and leave a note", str(SCRIPT[-1]), [
        "SessionStart", "BeforeAgent", "BeforeTool", "BeforeTool", "AfterTool", "AfterAgent",
    ])  # fmt: skip


def test_gemini_fails_closed_on_an_edited_agent_file(project: Project, tmp_path: Path) -> None:
    project.agent_file.write_text(project.agent_file.read_text() + "\n# edited, not trusted\n")
    with MockGemini(SCRIPT) as server:
        run_gemini(project, server, tmp_path)
    assert (project.dir / "build").is_dir()
    assert not (project.dir / "note.txt").exists()
    for result in server.tool_results()[:2]:
        assert "must not fail open" in result
        assert "changed since you trusted it" in result
