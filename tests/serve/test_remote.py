"""`hookgate hook codex|gemini --remote URL`: the agents that only run commands, decided
by `hookgate serve` as `hookgate hook` decides locally; no decision from the service is
a refusal."""

from __future__ import annotations

import json

import pytest

from agent_clis.conftest import GUARD_REASON, answer, bash, claude_event
from agent_clis.test_hook_gemini import gemini_event, shell
from runtime.project import Project
from serve.conftest import TOKENS, Service, free_port


def remote(project: Project, agent: str, stdin: str, url: str, token: str) -> dict[str, object]:
    done = project.hookgate("hook", agent, "--remote", url, stdin=stdin, trusted=False,
                            env=project.env(HOOKGATE_SERVE_TOKEN=token))  # fmt: skip
    assert done.returncode == 0, done.stderr
    reply: dict[str, object] = json.loads(done.stdout) if done.stdout.strip() else {}
    return reply


@pytest.mark.parametrize("command", ["rm -rf build", "echo hello > note.txt", "ls"])
def test_codex_and_gemini_events_get_the_local_answer(service: Service, command: str) -> None:
    project = service.project
    events = {"codex": claude_event(project, "PreToolUse", **bash(command)),
              "gemini": gemini_event(project, "BeforeTool", **shell(command))}  # fmt: skip
    for agent, event in events.items():
        local = answer(project, agent, event)
        assert remote(project, agent, event, service.url, TOKENS["alice"]) == local, agent


def test_a_wrong_token_is_a_refusal(service: Service) -> None:
    event = gemini_event(service.project, "BeforeTool", **shell("ls"))
    reply = remote(service.project, "gemini", event, service.url, "wrong-token-0123456789")
    assert reply["decision"] == "deny"
    assert "HTTP 401" in str(reply["reason"])


def test_no_service_is_a_refusal(project: Project) -> None:
    event = claude_event(project, "PreToolUse", **bash("ls"))
    url = f"http://127.0.0.1:{free_port()}"
    reply = remote(project, "codex", event, url, TOKENS["alice"])
    specific = reply["hookSpecificOutput"]
    assert isinstance(specific, dict)
    assert specific["permissionDecision"] == "deny"
    assert "gave no decision" in specific["permissionDecisionReason"]
    assert GUARD_REASON not in json.dumps(reply)
