"""`hookgate serve` bounds what a client may send before any token is checked.

uvicorn kept every header line until a head was complete, and waited for ever on a
connection that sent nothing: one client without a token grew the service by
hundreds of megabytes, or held its descriptors with idle sockets
(`hookgate.listening`). Each case talks to the real service on loopback, then checks
that an honest request is still answered.
"""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest

from hookgate import listening
from hookgate.listening import HEAD_TIMEOUT, MAX_HEAD, MAX_HEADERS
from runtime.project import HOOKGATE, Project
from serve.conftest import TOKENS, Service, free_port, wait_healthy

#: What the client tries to send: far more than the bound, and than the kernel buffers.
FLOOD = 64 * 1024 * 1024
#: Seconds a test waits for the service to close a connection: the bound and then some.
CLOSE_WAIT = HEAD_TIMEOUT * 6


def connect(service: Service) -> socket.socket:
    address = urlsplit(service.url)
    return socket.create_connection((address.hostname, address.port), timeout=CLOSE_WAIT)


def still_answers(service: Service) -> None:
    answered = httpx2.get(service.url + "/healthz", timeout=CLOSE_WAIT)
    assert answered.status_code == 200


def flood(connection: socket.socket, head: bytes, line: bytes) -> tuple[int, bytes]:
    """Send `head`, then `line` until `FLOOD` bytes or until the service cuts it off;
    the bytes sent, and what the service answered."""
    sent = 0
    try:
        connection.sendall(head)
        while sent < FLOOD:
            connection.sendall(line)
            sent += len(line)
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        return sent, connection.recv(4096)
    except ConnectionResetError:
        return sent, b""


def test_a_head_past_the_bound_is_refused_unread(service: Service) -> None:
    line = b"X-Filler: " + b"a" * 1014 + b"\r\n"
    with connect(service) as connection:
        sent, answer = flood(connection, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", line)

    assert sent < FLOOD // 4, "the service read on past the bound"
    assert answer == b"" or answer.startswith(b"HTTP/1.1 400")
    assert MAX_HEAD < FLOOD // 4
    still_answers(service)


def test_a_head_of_too_many_lines_is_refused(service: Service) -> None:
    lines = b"".join(b"X-%d: 1\r\n" % n for n in range(MAX_HEADERS + 1))
    with connect(service) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + lines + b"\r\n")
        answer = connection.recv(4096)

    assert answer.startswith(b"HTTP/1.1 400")
    still_answers(service)


def test_a_head_within_the_bounds_is_answered(service: Service) -> None:
    lines = b"".join(b"X-%d: 1\r\n" % n for n in range(MAX_HEADERS - 10))
    with connect(service) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + lines + b"\r\n")
        answer = connection.recv(4096)

    assert answer.startswith(b"HTTP/1.1 200")


def test_a_connection_that_sends_nothing_is_closed(service: Service) -> None:
    with connect(service) as connection:
        assert connection.recv(4096) == b""  # closed by the service, not by our wait
    still_answers(service)


def test_a_head_sent_in_part_and_then_left_is_closed(service: Service) -> None:
    with connect(service) as connection:
        connection.sendall(b"POST /v1/hook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ")
        assert connection.recv(4096) == b""
    honest = httpx2.post(service.url + "/v1/hook", content=b"{}", timeout=CLOSE_WAIT,
                         headers={"authorization": f"Bearer {TOKENS['alice']}"})  # fmt: skip
    assert honest.status_code in (200, 400)


def test_sockets_held_open_cannot_take_the_descriptors_an_honest_request_needs(
    project: Project, tmp_path: Path
) -> None:
    """A service allowed 1,024 descriptors, and 1,100 connections that send nothing:
    past `max_pending()` the oldest waiting is closed, so the honest request after them
    is still answered (it sends its head at once)."""
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {TOKENS['alice']}\n")
    tokens.chmod(0o600)
    port = free_port()
    process = subprocess.Popen(
        ["prlimit", "--nofile=1024:1024", str(HOOKGATE), "serve", "--agent",
         str(project.agent_file), "--port", str(port), "--token-file", str(tokens)],
        cwd=project.dir, env=project.env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    held: list[socket.socket] = []
    try:
        wait_healthy(url, process)
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(1100)]

        answered = httpx2.get(url + "/healthz", timeout=CLOSE_WAIT)

        assert answered.status_code == 200
        assert held[0].recv(1) == b""  # the oldest waiting, closed by the service
    finally:
        for connection in held:
            connection.close()
        process.terminate()
        process.wait(CLOSE_WAIT)


@pytest.fixture(params=["httptools", "h11"])
def bounded_server(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[int]:
    """Each of the two protocols `bounded_protocol` picks from, in a uvicorn of this
    process, answering 200; its port. The head timeout is shortened for the test."""
    import uvicorn

    monkeypatch.setattr(listening, "HEAD_TIMEOUT", 0.5)
    protocol = {"httptools": listening.BoundedHttpToolsProtocol,
                "h11": listening.BoundedH11Protocol}[request.param]  # fmt: skip

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

    port = free_port()
    config = uvicorn.Config(app, port=port, http=protocol, log_level="critical",
                            lifespan="off", **listening.server_options())  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.01)
    yield port
    server.should_exit = True
    thread.join(CLOSE_WAIT)


def test_each_protocol_closes_an_idle_connection(bounded_server: int) -> None:
    with socket.create_connection(("127.0.0.1", bounded_server), timeout=CLOSE_WAIT) as conn:
        assert conn.recv(4096) == b""


def test_each_protocol_refuses_a_head_past_the_bound(bounded_server: int) -> None:
    filler = b"X-Filler: " + b"a" * (MAX_HEAD + 1) + b"\r\n"
    with socket.create_connection(("127.0.0.1", bounded_server), timeout=CLOSE_WAIT) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n" + filler)
        answer = conn.recv(4096)
    assert answer == b"" or answer.startswith((b"HTTP/1.1 400", b"HTTP/1.1 431"))


def test_each_protocol_answers_a_head_within_the_bounds(bounded_server: int) -> None:
    with socket.create_connection(("127.0.0.1", bounded_server), timeout=CLOSE_WAIT) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
