"""What a `hookgate serve` worker keeps between requests: one process per persistent
hook (restarted if it dies, stopped with the service), the agent file checked by a
`stat` yet a changed file refused, and every decision audited once, in its session."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime.project import Project
from serve.conftest import TOKENS, Service, free_port, start_service, wait_healthy

#: A persistent hook that denies `whoami` naming its own pid, allows the rest, and,
#: at the end of its stdin, lingers: only being stopped ends it.
PID_HOOK = """import json, os, sys, time
for line in sys.stdin:
    message = json.loads(line)
    command = message["event"]["arguments"]["command"]
    reply = {"action": "deny", "reason": f"pid {os.getpid()}"} if command == "whoami" else None
    sys.stdout.write(json.dumps({"id": message["id"], "reply": reply}) + "\\n")
    sys.stdout.flush()
time.sleep(600)
"""
#: Seconds a stopped process may take to be gone (a loaded machine).
GONE_WAIT = 30.0


def call(command: str, session: str = "s-1", call_id: str = "c1") -> dict[str, object]:
    return {"event": "preToolCall", "session_id": session, "cwd": "/tmp", "tool": "shell",
            "call_id": call_id, "arguments": {"command": command}}  # fmt: skip


def serving(project: Project, *args: str) -> Iterator[Service]:
    port = free_port()
    process = start_service(project, "--port", str(port), *args,
                            HOOKGATE_SERVE_TOKEN=TOKENS["alice"])  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield Service(url, project, process)
    finally:
        if process.poll() is None:
            process.terminate()
            process.communicate(timeout=60)


def guard_with_pid_hook(project: Project) -> None:
    """The project's only hook: `PID_HOOK`, persistent, failing closed; trusted."""
    (project.dir / "pidhook.py").write_text(PID_HOOK)
    hook = {"name": "pid", "args": [sys.executable, "pidhook.py"], "persistent": True,
            "onError": "fail"}  # fmt: skip
    project.agent_file.write_text(json.dumps({"hooks": {"preToolCall": [hook]}}))
    project.trust()


@pytest.fixture(params=[1, 2], ids=["1 worker", "2 workers"])
def pid_service(project: Project, request: pytest.FixtureRequest) -> Iterator[Service]:
    guard_with_pid_hook(project)
    yield from serving(project, "--workers", str(request.param))


def hook_pid(service: Service) -> int:
    answer = service.post("/v1/hook", call("whoami"))
    assert answer.status_code == 200, answer.text
    assert answer.json()["action"] == "deny", answer.text
    return int(answer.json()["reason"].removeprefix("pid "))


def gone(pid: int) -> bool:
    """Whether `pid` is no process at all (a zombie is still one)."""
    return not Path(f"/proc/{pid}").exists()


def wait_gone(pids: set[int]) -> set[int]:
    """The pids of `pids` still there once `GONE_WAIT` has passed (or none, sooner)."""
    deadline = time.monotonic() + GONE_WAIT
    while (left := {pid for pid in pids if not gone(pid)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_a_persistent_hook_is_one_process_per_worker_stopped_with_the_service(
    pid_service: Service, request: pytest.FixtureRequest
) -> None:
    workers = 1 if "1 worker" in request.node.name else 2
    pids = [hook_pid(pid_service) for _ in range(10)]  # a new connection each: any worker
    assert len(set(pids)) <= workers, pids
    assert pid_service.post("/v1/hook", call("ls")).text == ""  # allowed by the same hook
    pid_service.process.terminate()
    _, stderr = pid_service.process.communicate(timeout=60)
    assert not wait_gone(set(pids)), f"left running after the service: {stderr[-2000:]}"


def test_a_persistent_hook_that_dies_is_started_again(project: Project) -> None:
    guard_with_pid_hook(project)
    for service in serving(project, "--workers", "1"):
        first = hook_pid(service)
        assert hook_pid(service) == first
        os.kill(first, signal.SIGKILL)  # found out, and reaped, by the next event
        second = hook_pid(service)
        assert second != first
        assert gone(first), "the killed hook was never reaped"
        assert [hook_pid(service) for _ in range(3)] == [second] * 3


def keep_size_and_mtime(path: Path, text: str) -> None:
    before = path.stat()
    assert len(text) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_guard_changed_under_the_service_is_refused(project: Project) -> None:
    guard = project.dir / "hooks" / "guard-rm-rf.sh"
    for service in serving(project, "--workers", "2"):
        for _ in range(6):  # both workers have checked, and kept, the file
            denied = service.post("/v1/hook", call("rm -rf build")).json()
            assert denied["action"] == "deny"
            assert "not allowed" in denied["reason"]
        text = guard.read_text()
        keep_size_and_mtime(guard, text.replace("exit 2", "exit 0", 1))
        for _ in range(6):
            refused = service.post("/v1/hook", call("ls")).json()
            assert refused["action"] == "deny", refused
            assert "changed since you trusted it" in refused["reason"]
        project.trust()  # the new version, trusted: answered without a restart
        for _ in range(6):
            assert service.post("/v1/hook", call("ls")).text == ""


def test_a_version_trusted_anew_replaces_the_persistent_hook(project: Project) -> None:
    guard_with_pid_hook(project)
    for service in serving(project, "--workers", "1"):
        old = hook_pid(service)
        with (project.dir / "pidhook.py").open("a") as script:
            script.write("# version 2\n")
        project.trust()
        new = hook_pid(service)
        assert new != old
        assert not wait_gone({old}), "the old version's process was left running"
        assert hook_pid(service) == new


def test_every_decision_is_audited_once_whichever_worker_made_it(project: Project) -> None:
    for service in serving(project, "--workers", "2"):
        for number in range(24):
            session = f"s-{number % 3}"
            answer = service.post("/v1/hook", call("ls", session, f"c{number}"))
            assert answer.status_code == 200, answer.text
        files = {p.stem.rsplit("-", 1)[-1]: p for p in project.session_files()}
        assert sorted(files) == ["0", "1", "2"]  # s-0, s-1, s-2: one session each
        (project.session_files()[0]).unlink()  # a session file removed meanwhile
        assert service.post("/v1/hook", call("ls", "s-9", "c99")).status_code == 200
        for number in range(24, 30):
            service.post("/v1/hook", call("ls", f"s-{number % 3}", f"c{number}"))
    recorded = [
        r["data"]["agent_session"]
        for path in project.session_files()
        for r in project.records(path)
        if r.get("kind") == "agent_hook"
    ]
    assert len(recorded) == 24 - 8 + 1 + 6  # the removed file's 8 went with it
    assert sorted(set(recorded)) == ["s-0", "s-1", "s-2", "s-9"]


def test_the_load_benchmark_decides_every_request_correctly(tmp_path: Path) -> None:
    bench = Path(__file__).resolve().parents[2] / "bench" / "serve_load.py"
    run = subprocess.run(
        [sys.executable, str(bench), "--kinds", "none,python,process,persistent",
         "--requests", "120", "--clients", "4", "--rate", "500", "--json"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(r["kind"], r["errors"], r["decided"]) for r in rows] == [
        (kind, 0, 120) for kind in ("none", "python", "process", "persistent")
    ]
