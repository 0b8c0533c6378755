"""`hookgate hook codex|gemini --remote URL`: the agents that only run commands, decided
by `hookgate serve` as `hookgate hook` decides locally; no decision from the service is
a refusal."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from typing import ClassVar

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


class _Answering(http.server.BaseHTTPRequestHandler):
    """A loopback stand-in: answers every request with the class's `status` and
    `headers` (a redirect, a 204), and records what each request carried."""

    status = 200
    headers_out: ClassVar[dict[str, str]] = {}
    seen: ClassVar[list[dict[str, str]]] = []

    def _answer(self) -> None:
        type(self).seen.append({"method": self.command, **dict(self.headers)})
        self.send_response(self.status)
        for name, value in self.headers_out.items():
            self.send_header(name, value)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@pytest.fixture
def stand_in() -> Iterator[Callable[..., tuple[str, type[_Answering]]]]:
    servers: list[http.server.HTTPServer] = []

    def start(status: int = 200, **headers: str) -> tuple[str, type[_Answering]]:
        handler = type("Handler", (_Answering,), {"status": status, "headers_out": headers,
                                                  "seen": []})  # fmt: skip
        server = http.server.HTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", handler

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_no_decision_and_the_token_goes_nowhere_else(
    project: Project, stand_in: Callable[..., tuple[str, type[_Answering]]], status: int
) -> None:
    """A service (or what stands at its URL) that redirects: the token must not follow
    to the other place, nor that place's `{}` count as "allowed"."""
    elsewhere, other = stand_in()
    url, _ = stand_in(status, location=elsewhere + "/v1/hook/codex")
    event = claude_event(project, "PreToolUse", **bash("rm -rf ~"))

    reply = remote(project, "codex", event, url, TOKENS["alice"])

    specific = reply["hookSpecificOutput"]
    assert isinstance(specific, dict)
    assert specific["permissionDecision"] == "deny"
    assert f"HTTP {status}" in specific["permissionDecisionReason"]
    assert other.seen == []


def test_an_answer_other_than_200_is_no_decision(
    project: Project, stand_in: Callable[..., tuple[str, type[_Answering]]]
) -> None:
    url, _ = stand_in(204)
    event = claude_event(project, "PreToolUse", **bash("rm -rf ~"))

    reply = remote(project, "codex", event, url, TOKENS["alice"])

    specific = reply["hookSpecificOutput"]
    assert isinstance(specific, dict)
    assert specific["permissionDecision"] == "deny"
    assert "HTTP 204" in specific["permissionDecisionReason"]
