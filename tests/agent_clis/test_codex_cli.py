"""The real Codex CLI (`codex exec`, pinned by scripts/install-agent-clis) with hookgate
as its hooks, against a scripted Responses API on loopback: the model asks for
`rm -rf build`, then `echo hello > note.txt`, then answers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_clis.conftest import AGENT_CLIS, GUARD_REASON, REWRITTEN, assert_whole_session
from agent_clis.mock_responses import MockResponses
from agent_clis.scripted import ToolUse
from runtime.project import Project

CODEX = AGENT_CLIS / "codex"
#: Seconds one `codex exec` run may take: a scripted session takes a few.
RUN_TIMEOUT = 180
SCRIPT = (
    ToolUse("exec_command", {"cmd": "rm -rf build"}),
    ToolUse("exec_command", {"cmd": "echo hello > note.txt"}),
    "Done: the build stays, the note is written.",
)

pytestmark = pytest.mark.skipif(
    not CODEX.exists(),
    reason=f"Codex CLI is not installed ({CODEX}): run scripts/install-agent-clis",
)


def run_codex(project: Project, server: MockResponses, tmp_path: Path) -> str:
    """`codex exec` in the project, its hooks installed by `hookgate install codex`.

    Codex runs only hooks the user trusted in Codex; a test has no one to review them,
    so it passes Codex's own `--dangerously-bypass-hook-trust` (install never does).
    No sandbox: Codex's needs bubblewrap, which a container may lack."""
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model = "gpt-5-codex"\nmodel_provider = "mock"\n[model_providers.mock]\n'
        f'name = "mock"\nbase_url = "{server.url}"\nwire_api = "responses"\n'
        'env_key = "MOCK_API_KEY"\n'
    )
    env = project.env(CODEX_HOME=str(codex_home), MOCK_API_KEY="sk-test")
    installed = project.hookgate("install", "codex", "--user", "--yes", trusted=False, env=env)
    assert installed.returncode == 0, installed.stderr
    assert (codex_home / "hooks.json").is_file()
    done = subprocess.run(
        [str(CODEX), "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
         "-s", "danger-full-access", "clean up and leave a note"],
        cwd=project.dir, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    return done.stdout


def test_codex_runs_hookgate_guard_and_rewrite(project: Project, tmp_path: Path) -> None:
    with MockResponses(SCRIPT) as server:
        run_codex(project, server, tmp_path)
    assert (project.dir / "build").is_dir()
    denied = server.tool_results()[0]
    assert GUARD_REASON in denied
    assert (project.dir / "note.txt").read_text().strip() == REWRITTEN
    assert_whole_session(project, "codex", "clean up and leave a note", str(SCRIPT[-1]), [
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PreToolUse", "PostToolUse", "Stop",
    ])  # fmt: skip


def test_codex_fails_closed_on_an_untrusted_agent_file(project: Project, tmp_path: Path) -> None:
    project.hookgate("trust", "--revoke", str(project.agent_file), trusted=False)
    with MockResponses(SCRIPT) as server:
        run_codex(project, server, tmp_path)
    assert (project.dir / "build").is_dir()
    assert not (project.dir / "note.txt").exists()
    for result in server.tool_results()[:2]:
        assert "must not fail open" in result
        assert "is not trusted" in result


def test_a_replaced_result_reaches_the_model_as_the_block_reason(
    project: Project, tmp_path: Path
) -> None:
    # Codex takes no replaced result from a hook: hookgate blocks it with the replacement
    # as the reason, which Codex sends in the output's place (docs/agents.md).
    scrub = project.hook("scrub.sh", "jq -c '{result: {content: \"[scrubbed]\", is_error: false}}'")
    hooks = {"postToolCall": [{"matcher": "^shell$", "command": scrub}]}
    project.agent_file.write_text(json.dumps({"hooks": hooks}))
    project.trust()
    script = (ToolUse("exec_command", {"cmd": "echo KEY=secret"}), "done")
    with MockResponses(script) as server:
        run_codex(project, server, tmp_path)
    (result,) = server.tool_results()
    assert "[scrubbed]" in result
    assert "secret" not in result  # Codex sends the block's reason in the output's place
