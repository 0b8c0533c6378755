"""Real clients of `hookgate serve`: a hookgate agent (`hookgate -p`, scripted model)
whose only hook is an `http:` hook pointed at the service, and the real Claude Code
CLI with `type: http` hooks. Each decides as the service's agent file decides locally;
a client without the right token fails closed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_clis.conftest import AGENT_CLIS, GUARD_REASON, REWRITTEN
from agent_clis.mock_anthropic import MockAnthropic, ToolUse
from runtime.project import Project
from serve.conftest import TOKENS, Service

SHELL_CALLS = ("rm -rf build", "echo hello > note.txt")
CLAUDE = AGENT_CLIS / "claude"
#: Seconds one `claude -p` run may take: a scripted session takes a few.
CLAUDE_TIMEOUT = 180


def client_project(tmp_path: Path, name: str) -> Project:
    directory = tmp_path / name
    (directory / "build").mkdir(parents=True)
    return Project(directory, tmp_path / f"{name}-home")


def run_scripted(client: Project, hooks: dict[str, Any], token: str = "") -> list[str]:
    """`hookgate -p` in `client`: the model asks for `SHELL_CALLS`; the tool results."""
    script = [{"tool_calls": [{"name": "shell", "arguments": {"command": c}}]} for c in SHELL_CALLS]
    model = client.script(*script, {"text": "done"})
    client.write_agent(model, yolo=True, sandbox={"mode": "off"}, hooks=hooks)
    done = client.hookgate("-p", "go", env=client.env(FLEET_TOKEN=token))
    assert done.returncode == 0, done.stderr
    return [
        str(record["message"]["content"])
        for record in client.records()
        if record.get("type") == "message" and record["message"]["role"] == "tool"
    ]


def remote_hooks(service: Service) -> dict[str, Any]:
    policy = {"name": "fleet-policy", "onError": "fail", "http": {
        "url": service.url + "/v1/hook", "headers": {"Authorization": "Bearer $FLEET_TOKEN"},
        "env_allowlist": ["FLEET_TOKEN"]}}  # fmt: skip
    return {"preToolCall": [policy]}


def test_a_hookgate_http_hook_decides_as_the_local_file(service: Service, tmp_path: Path) -> None:
    served = json.loads(service.project.agent_file.read_text())["hooks"]
    local = client_project(tmp_path, "local")
    for hook in served["preToolCall"]:  # the same scripts, run in the local project
        hook["command"] = str(service.project.dir / hook["command"])
    local_results = run_scripted(local, served)

    remote = client_project(tmp_path, "remote")
    remote_results = run_scripted(remote, remote_hooks(service), TOKENS["alice"])

    for results, project in ((local_results, local), (remote_results, remote)):
        assert GUARD_REASON in results[0]
        assert (project.dir / "build").is_dir()
        assert (project.dir / "note.txt").read_text().strip() == REWRITTEN
    assert remote_results[1] == local_results[1]


def test_a_fail_closed_client_with_a_wrong_token_denies(service: Service, tmp_path: Path) -> None:
    client = client_project(tmp_path, "client")
    results = run_scripted(client, remote_hooks(service), "not-the-token-0123456789")
    assert all("HTTP 401" in result for result in results), results
    assert (client.dir / "build").is_dir()
    assert not (client.dir / "note.txt").exists()


def claude_settings(service: Service, token_variable: str) -> dict[str, Any]:
    hook = {"type": "http", "url": service.url + "/v1/hook/claude", "timeout": 60,
            "headers": {"Authorization": f"Bearer ${token_variable}"},
            "allowedEnvVars": [token_variable]}  # fmt: skip
    # Claude Code runs only command hooks on SessionStart.
    events = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
    return {"hooks": {event: [{"matcher": "*", "hooks": [hook]}] for event in events}}


@pytest.mark.skipif(not CLAUDE.exists(), reason=f"Claude Code is not installed ({CLAUDE})")
def test_claude_code_http_hooks_get_the_services_decisions(
    service: Service, tmp_path: Path
) -> None:
    client = client_project(tmp_path, "claude")
    (client.dir / ".claude").mkdir()
    settings = claude_settings(service, "FLEET_TOKEN")
    (client.dir / ".claude" / "settings.json").write_text(json.dumps(settings))
    script = [ToolUse("Bash", {"command": c, "description": "run"}) for c in SHELL_CALLS]
    with MockAnthropic((*script, "Done.")) as server:
        env = client.env(
            ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-ant-test",
            CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"), DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
            FLEET_TOKEN=TOKENS["alice"],
        )  # fmt: skip
        done = subprocess.run(
            [str(CLAUDE), "-p", "clean up and leave a note", "--allowedTools", "Bash",
             "--output-format", "json"],
            cwd=client.dir, env=env, capture_output=True, text=True, timeout=CLAUDE_TIMEOUT,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    assert (client.dir / "build").is_dir()  # the service's guard held
    assert GUARD_REASON in server.tool_results()[0]
    assert (client.dir / "note.txt").read_text().strip() == REWRITTEN
    # The service audited the whole Claude session, under the token's name.
    (path,) = [p for p in service.project.session_files() if "-claude-" in p.stem]
    decisions = [r["data"] for r in service.project.records(path) if r.get("kind") == "agent_hook"]
    assert {d["client"] for d in decisions} == {"alice"}
    assert [d["event"] for d in decisions] == [
        "UserPromptSubmit", "PreToolUse", "PreToolUse", "PostToolUse", "Stop",
    ]  # fmt: skip
