"""`hookgate serve` started for real on loopback, over the guarded project of
tests/agent_clis (the rm -rf guard, `onError: fail`, and a rewrite hook, trusted)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agent_clis.conftest import project  # the guarded project, a fixture here too
from runtime.project import HOOKGATE, Project

__all__ = ["Service", "project", "service"]

#: The clients of the token file, by name.
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}
#: Seconds the service may take to answer /healthz once started (a loaded machine).
START_WAIT = 30.0
#: Seconds one request to the service may take in a test.
REQUEST_TIMEOUT = 30.0


@dataclass
class Service:
    """A running `hookgate serve`: its base URL, and the project whose file it serves."""

    url: str
    project: Project
    process: subprocess.Popen[str]

    def post(self, route: str, body: Any, token: str | None = TOKENS["alice"]) -> httpx2.Response:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx2.post(self.url + route, content=data, headers=headers,
                          timeout=REQUEST_TIMEOUT)  # fmt: skip


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_service(project: Project, *args: str, **env: str) -> subprocess.Popen[str]:
    """`hookgate serve ARGS` in the project, output captured (not waited for)."""
    return subprocess.Popen(
        [str(HOOKGATE), "serve", *args], cwd=project.dir, env=project.env(**env),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def wait_healthy(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + START_WAIT
    while True:
        assert process.poll() is None, process.communicate()[1]
        try:
            if httpx2.get(url + "/healthz", timeout=1.0).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        assert time.monotonic() < deadline, "hookgate serve never answered /healthz"
        time.sleep(0.1)


@pytest.fixture
def service(project: Project, tmp_path: Path) -> Iterator[Service]:
    """`hookgate serve` of the guarded project's agent file, with a token file."""
    token_file = tmp_path / "tokens"
    token_file.write_text("# name token\n" + "".join(f"{n} {t}\n" for n, t in TOKENS.items()))
    token_file.chmod(0o600)
    port = free_port()
    process = start_service(project, "--agent", str(project.agent_file), "--port", str(port),
                            "--token-file", str(token_file))  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield Service(url, project, process)
    finally:
        process.terminate()
        process.communicate(timeout=START_WAIT)
