"""`hookgate serve` driven with raw requests: both protocols answer as `hookgate hook`
answers the same event locally; no token, no decision; the caps and the start-up trust."""

from __future__ import annotations

import json
import ssl
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from agent_clis.conftest import GUARD_REASON, REWRITTEN, answer, bash, claude_event
from runtime.project import Project
from serve.conftest import TOKENS, Service, free_port, start_service, wait_healthy


def native_call(project: Project, command: str) -> dict[str, object]:
    """What a hookgate `http:` hook POSTs for a shell call (the native envelope)."""
    return {"event": "preToolCall", "session_id": "s-1", "cwd": str(project.dir),
            "tool": "shell", "call_id": "c1", "arguments": {"command": command}}  # fmt: skip


def test_claude_events_get_the_answer_hookgate_hook_gives_locally(service: Service) -> None:
    project = service.project
    for command in ("rm -rf build", "echo hello > note.txt", "ls"):
        event = claude_event(project, "PreToolUse", **bash(command))
        remote = service.post("/v1/hook/claude", json.loads(event))
        assert remote.status_code == 200, remote.text
        assert remote.json() == answer(project, "claude", event)
    denied = service.post("/v1/hook/claude", json.loads(claude_event(project, "PreToolUse",
                          **bash("rm -rf build")))).json()  # fmt: skip
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert GUARD_REASON in denied["hookSpecificOutput"]["permissionDecisionReason"]


def test_the_native_route_answers_a_hookgate_http_hook(service: Service) -> None:
    denied = service.post("/v1/hook", native_call(service.project, "rm -rf build"))
    assert denied.status_code == 200
    assert denied.json()["action"] == "deny"
    assert GUARD_REASON in denied.json()["reason"]
    rewritten = service.post("/v1/hook", native_call(service.project, "echo hello > n.txt"))
    assert rewritten.json() == {"arguments": {"command": f"echo {REWRITTEN} > n.txt"}}
    untouched = service.post("/v1/hook", native_call(service.project, "ls"))
    assert (untouched.status_code, untouched.text) == (200, "")


def test_the_folder_a_client_names_leaves_the_services_path_alone(service: Service) -> None:
    """A client's event names its own project, on its own machine: its `cwd` of
    `/usr/bin` must not take `/usr/bin` out of the service's hooks' `PATH` (the rewrite
    hook's `jq` comes from there)."""
    call = {**native_call(service.project, "echo hello > n.txt"), "cwd": "/usr/bin"}

    rewritten = service.post("/v1/hook", call)

    assert rewritten.json() == {"arguments": {"command": f"echo {REWRITTEN} > n.txt"}}


def test_each_decision_is_audited_with_the_client_name(service: Service) -> None:
    event = json.loads(claude_event(service.project, "PreToolUse", session="s-9", **bash("ls")))
    assert service.post("/v1/hook/claude", event, token=TOKENS["bob"]).status_code == 200
    (path,) = [p for p in service.project.session_files() if p.stem.endswith("-claude-bob-s-9")]
    decisions = [r["data"] for r in service.project.records(path) if r.get("kind") == "agent_hook"]
    assert [(d["client"], d["event"], d["decision"]) for d in decisions] == [
        ("bob", "PreToolUse", "allowed")
    ]


@pytest.mark.parametrize(
    "alices", ["bob_sess", "bob.sess"], ids=["the same id", "one that folds to it"]
)
def test_a_clients_events_never_land_in_anothers_audit_session(
    service: Service, alices: str
) -> None:
    """Bob's end-of-turn event is judged with his session's last question: Alice must not
    put one there, by his session id or by a spelling of it."""
    asked = {"event": "preGeneration", "cwd": str(service.project.dir)}
    assert service.post("/v1/hook", {**asked, "session_id": "bob_sess", "prompt": "bob asks"},
                        token=TOKENS["bob"]).status_code == 200  # fmt: skip
    assert service.post("/v1/hook", {**asked, "session_id": alices, "prompt": "alice planted"},
                        token=TOKENS["alice"]).status_code == 200  # fmt: skip

    texts = [path.read_text() for path in service.project.session_files()]

    assert sum("bob asks" in text for text in texts) == 1
    assert not any("bob asks" in text and "alice planted" in text for text in texts)


def test_no_token_or_a_wrong_one_gets_no_decision(service: Service) -> None:
    body = native_call(service.project, "rm -rf build")
    for token in (None, "alice-token-0123456789x", "Basic xyz"):
        refused = service.post("/v1/hook", body, token=token)
        assert refused.status_code == 401, token
        assert "deny" not in refused.text
    assert service.post("/v1/hook/claude", {}, token=None).status_code == 401
    assert not service.project.session_files()  # nothing was decided, nothing audited


def test_a_body_past_the_cap_is_refused_unread(service: Service) -> None:
    huge = native_call(service.project, "x" * (5 * 1024 * 1024))
    assert service.post("/v1/hook", huge).status_code == 413


def test_an_unreadable_event_is_a_bad_request(service: Service) -> None:
    assert service.post("/v1/hook", b"not json").status_code == 400
    assert service.post("/v1/hook", {"event": "preToolKall"}).status_code == 400


def test_serve_refuses_to_start_on_an_untrusted_file(project: Project, tmp_path: Path) -> None:
    project.agent_file.write_text(project.agent_file.read_text() + "\n# edited\n")
    process = start_service(project, "--port", str(free_port()))
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "changed since you trusted it" in stderr


def test_serve_refuses_to_start_without_a_token(project: Project) -> None:
    process = start_service(project, "--port", str(free_port()))
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "none is given" in stderr
    assert "HOOKGATE_SERVE_TOKEN" in stderr


def test_serve_refuses_a_token_file_others_may_read(project: Project, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {TOKENS['alice']}\n")
    tokens.chmod(0o644)

    process = start_service(project, "--port", str(free_port()), "--token-file", str(tokens))
    _, stderr = process.communicate(timeout=60)

    assert process.returncode == 1
    assert f"{tokens}: the token file may be read or written by others (mode 0644)" in stderr
    assert f"chmod 600 {tokens}" in stderr


def test_a_decision_past_the_time_limit_is_a_503(project: Project) -> None:
    slow = {"name": "slow", "command": "sleep 3", "timeout": 30, "onError": "fail"}
    project.agent_file.write_text(json.dumps({"hooks": {"preToolCall": [slow]}}))
    project.trust()
    port = free_port()
    process = start_service(project, "--port", str(port), "--time-limit", "0.5",
                            HOOKGATE_SERVE_TOKEN=TOKENS["alice"])  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        late = Service(url, project, process).post("/v1/hook", native_call(project, "ls"))
        assert late.status_code == 503
        assert "no decision within 0.5 s" in late.text
    finally:
        process.terminate()
        process.communicate(timeout=60)


@pytest.mark.parametrize("option", [["--workers", "0"], ["--time-limit", "-1"]])
def test_serve_refuses_a_bound_that_is_not_positive(project: Project, option: list[str]) -> None:
    process = start_service(project, "--port", str(free_port()), *option,
                            HOOKGATE_SERVE_TOKEN=TOKENS["alice"])  # fmt: skip
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "must be positive" in stderr


def test_hooks_do_not_see_the_services_token(project: Project) -> None:
    tell = project.hook(
        "tell.sh",
        'echo "{\\"action\\": \\"deny\\", \\"reason\\": \\"token: ${HOOKGATE_SERVE_TOKEN:-none}\\"}"',
    )
    project.agent_file.write_text(json.dumps({"hooks": {"preToolCall": [{"command": tell}]}}))
    project.trust()
    port = free_port()
    process = start_service(project, "--port", str(port), HOOKGATE_SERVE_TOKEN=TOKENS["alice"])
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        told = Service(url, project, process).post("/v1/hook", native_call(project, "ls"))
        assert told.json() == {"action": "deny", "reason": "token: none"}
    finally:
        process.terminate()
        process.communicate(timeout=60)


def test_serve_speaks_https_with_a_certificate(project: Project, tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)  # fmt: skip
    port = free_port()
    process = start_service(project, "--port", str(port), "--ssl-certfile", str(cert),
                            "--ssl-keyfile", str(key), HOOKGATE_SERVE_TOKEN=TOKENS["alice"])  # fmt: skip
    url = f"https://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, process.communicate()[1]
            try:
                denied = httpx2.post(url + "/v1/hook", verify=ssl.create_default_context(cafile=str(cert)), timeout=10,
                                     content=json.dumps(native_call(project, "rm -rf build")),
                                     headers={"authorization": f"Bearer {TOKENS['alice']}"})  # fmt: skip
                break
            except httpx2.TransportError:
                assert time.monotonic() < deadline, "no HTTPS answer"
                time.sleep(0.1)
        assert denied.json()["action"] == "deny"
    finally:
        process.terminate()
        process.communicate(timeout=60)
