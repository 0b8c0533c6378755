"""Nobody but the holder of the token drives the window: plain HTTP against the real server.

Each refusal is a 403 that runs nothing: no session opens, no hook runs, no question
reaches the session file.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from hookgate.listening import HEAD_TIMEOUT, MAX_HEADERS
from runtime.project import Project, read_log, served_model
from support.chat_server import ChatServer, ServedReply
from window.conftest import Window

EVIL = "http://evil.example"


@pytest.fixture
def guarded(project: Project, tmp_path: Path) -> Path:
    """An agent file whose preGeneration hook writes down every question it sees."""
    log = tmp_path / "pre.log"
    project.write_agent(
        project.script({"text": "answered"}), hooks={"preGeneration": [project.recorder(log)]}
    )
    return log


def client(window: Window, *, token: bool = True, origin: str | None = None) -> httpx2.Client:
    """A client of the window: with the token in its header, as the page sends it, and an
    `Origin` (default: its own)."""
    headers = {"origin": origin or window.base}
    if token:
        headers["authorization"] = f"Bearer {window.token}"
    return httpx2.Client(base_url=window.base, headers=headers, timeout=10)


def open_session(window: Window) -> str:
    with client(window) as http:
        answer = http.post("/api/sessions", json={})
    assert answer.status_code == 201, answer.text
    session_id = answer.json()["id"]
    assert isinstance(session_id, str)
    return session_id


def ask(http: httpx2.Client, session_id: str, question: str) -> httpx2.Response:
    return http.post(f"/api/sessions/{session_id}/turns", json={"question": question})


def test_the_page_loads_without_the_token_and_nothing_sets_a_cookie(
    guarded: Path, start_window: Callable[..., Window]
) -> None:
    """The page and its files hold no secret: the page takes the token from its own
    address. No answer sets a cookie, which would reach every port of 127.0.0.1."""
    window = start_window()
    session_id = open_session(window)
    with httpx2.Client(base_url=window.base, timeout=10) as http:
        answers = [http.get(path) for path in (window.url, "/", "/static/app.js", "/code.css")]
    with client(window) as http:
        answers += [http.get("/api/sessions"), http.get(f"/api/sessions/{session_id}/hooks")]

    assert [answer.status_code for answer in answers] == [200] * 6
    assert [answer for answer in answers if "set-cookie" in answer.headers] == []
    assert "default-src 'self'" in answers[0].headers["content-security-policy"]
    assert answers[0].headers["referrer-policy"] == "no-referrer"
    assert window.token not in answers[0].text


#: Every kind of route that acts or tells: the API and the event stream.
ROUTES = [
    ("GET", "/api/sessions"),
    ("POST", "/api/sessions"),
    ("GET", "/api/sessions/{id}/events"),
    ("GET", "/api/sessions/{id}/hooks"),
    ("POST", "/api/sessions/{id}/turns"),
    ("POST", "/api/sessions/{id}/cancel"),
    ("POST", "/api/sessions/{id}/consent"),
    ("POST", "/api/sessions/{id}/close"),
    ("GET", "/api/nowhere"),
]


def offers(window: Window) -> dict[str, dict[str, Any]]:
    """Requests that do not carry the token the one way the window takes it (its header),
    by what they carry instead."""
    cookie = f"hookgate_window_{window.port}={window.token}"
    return {
        "nothing": {},
        "a wrong token": {"headers": {"authorization": f"Bearer {window.token[:-1]}x"}},
        "another scheme": {"headers": {"authorization": f"Basic {window.token}"}},
        # What a browser sends to every port of 127.0.0.1: a cookie is no credential.
        "the old cookie": {"headers": {"cookie": cookie}},
        # An address can be logged or sent on: the API takes no token in one.
        "the query": {"params": {"token": window.token}},
    }


def test_a_request_without_the_token_is_refused_and_runs_nothing(
    guarded: Path, start_window: Callable[..., Window], project: Project
) -> None:
    window = start_window()
    session_id = open_session(window)
    body = json.dumps({"question": "hello"})

    with client(window, token=False) as http:
        for method, path in ROUTES:
            for what, offer in offers(window).items():
                target = path.format(id=session_id)
                refused = http.request(method, target, content=body, **offer)
                assert refused.status_code == 403, (method, path, what)
                assert "URL hookgate printed" in refused.text
                assert refused.headers["referrer-policy"] == "no-referrer"
    assert read_log(guarded) == []  # no question reached a hook
    assert len(project.session_files()) == 1
    assert [m for m in project.messages() if m["role"] == "user"] == []
    with client(window) as http:
        assert [s["id"] for s in http.get("/api/sessions").json()["open"]] == [session_id]


def test_a_request_from_a_foreign_origin_is_refused_and_runs_nothing(
    guarded: Path, start_window: Callable[..., Window]
) -> None:
    window = start_window()
    session_id = open_session(window)

    for origin in (EVIL, "http://127.0.0.1:1", f"https://127.0.0.1:{window.port}", "null"):
        with client(window, origin=origin) as http:
            turn = ask(http, session_id, "hello")
            session = http.post("/api/sessions", json={})
            listing = http.get("/api/sessions")
        assert (turn.status_code, session.status_code, listing.status_code) == (403, 403, 403)
        assert "other sites" in turn.text
    assert read_log(guarded) == []
    with client(window) as http:
        assert len(http.get("/api/sessions").json()["open"]) == 1


def test_a_request_that_changes_something_must_name_its_origin(
    guarded: Path, start_window: Callable[..., Window]
) -> None:
    window = start_window()
    session_id = open_session(window)

    with client(window) as http:
        del http.headers["origin"]
        turn = ask(http, session_id, "hello")

    assert turn.status_code == 403
    assert read_log(guarded) == []


def test_a_foreign_host_is_refused_even_with_the_token(
    guarded: Path, start_window: Callable[..., Window]
) -> None:
    """DNS rebinding: another site's name resolved to 127.0.0.1 arrives with its Host."""
    window = start_window()
    session_id = open_session(window)

    for host in ("evil.example", f"evil.example:{window.port}", "127.0.0.1:1", "127.0.0.1"):
        with client(window) as http:
            http.headers["host"] = host
            turn = ask(http, session_id, "hello")
            page = http.get(f"/?token={window.token}")
        assert (turn.status_code, page.status_code) == (403, 403), host
        assert "loopback address" in turn.text
    assert read_log(guarded) == []


def test_with_the_token_a_question_runs(guarded: Path, start_window: Callable[..., Window]) -> None:
    """The refusals above are refusals, not a broken server."""
    window = start_window()
    session_id = open_session(window)

    with client(window) as http:
        assert ask(http, session_id, "hello").status_code == 202
        with http.stream("GET", f"/api/sessions/{session_id}/events") as events:
            ends = (line for line in events.iter_lines() if '"turn_end"' in line)
            assert '"outcome": "answered"' in next(ends)

    assert [event["prompt"] for event in read_log(guarded)] == ["hello"]


def test_the_window_listens_on_loopback_only(
    guarded: Path, start_window: Callable[..., Window]
) -> None:
    window = start_window()
    listening = [
        line.split()[1]
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
        if line.split()[3] == "0A"  # LISTEN
    ]
    assert f"0100007F:{window.port:04X}" in listening  # 127.0.0.1, little-endian
    assert f"00000000:{window.port:04X}" not in listening


def test_an_untrusted_agent_file_is_refused_before_anything_runs(
    guarded: Path, project: Project
) -> None:
    result = project.hookgate("window", "--no-browser", trusted=False)

    assert result.returncode == 1
    assert result.stdout == ""  # no URL: nothing is served
    assert "trust" in result.stderr
    assert read_log(guarded) == []


def test_a_page_that_connects_later_gets_each_answer_once_whole(
    project: Project, chat_server: ChatServer, start_window: Callable[..., Window]
) -> None:
    """The pieces arrive one by one, so the answer was updated three times; a late page
    replays only its last update (memory: the answer's size, not the sum of updates)."""
    project.write_agent(served_model(chat_server.url), tools=[])
    chat_server.queue(ServedReply(text="one two three", pieces=3, fault="trickle",
                                  trickle_s=0.0002))  # fmt: skip
    window = start_window()
    session_id = open_session(window)

    with client(window) as http:
        assert ask(http, session_id, "count").status_code == 202
        with http.stream("GET", f"/api/sessions/{session_id}/events") as live:
            live_events = events_until_turn_end(live.iter_lines())
        with http.stream("GET", f"/api/sessions/{session_id}/events") as late:
            late_events = events_until_turn_end(late.iter_lines())

    live_answers = [e for e in live_events if e["type"] == "answer"]
    late_answers = [e for e in late_events if e["type"] == "answer"]
    assert len(live_answers) > 1  # the page saw it grow
    assert len(late_answers) == 1
    assert "one two three" in late_answers[0]["html"]
    assert late_answers[0] == live_answers[-1]


def events_until_turn_end(lines: Iterator[str]) -> list[dict[str, Any]]:
    events = []
    for line in lines:
        if line.startswith("data: "):
            events.append(json.loads(line.removeprefix("data: ")))
            if events[-1]["type"] == "turn_end":
                return events
    raise AssertionError(f"the stream ended before the turn did: {events}")


def test_the_window_bounds_a_head_and_closes_an_idle_connection(
    guarded: Path, start_window: Callable[..., Window]
) -> None:
    """The same bounds as `hookgate serve`'s (`hookgate.listening`), before the token is
    read: a flood of header lines is refused, a connection that sends nothing closed."""
    window = start_window()
    lines = b"".join(b"X-%d: 1\r\n" % n for n in range(MAX_HEADERS + 1))
    with socket.create_connection(("127.0.0.1", window.port), timeout=HEAD_TIMEOUT * 6) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n" + lines + b"\r\n")
        assert conn.recv(4096).startswith(b"HTTP/1.1 400")
    with socket.create_connection(("127.0.0.1", window.port), timeout=HEAD_TIMEOUT * 6) as conn:
        assert conn.recv(4096) == b""  # closed by the window, not by our wait
    assert httpx2.get(window.base + "/", timeout=HEAD_TIMEOUT).status_code == 200


def test_a_page_that_loads_while_the_turn_ends_never_gets_a_blocked_question(
    project: Project, start_window: Callable[..., Window], tmp_path: Path
) -> None:
    """The redactor blocks a question holding a key; a postGeneration hook is still
    running (held until the test lets it go) when another page loads the session's
    events from the start: it replays the marker, never the question."""
    secret = "AKIAQWERTYUIOPASDFGH"
    running, release = tmp_path / "post-running", tmp_path / "release"
    os.mkfifo(running)  # read below: it waits for the hook to be running
    held = f'cat >/dev/null; echo up > "{running}"; while [ ! -e "{release}" ]; do sleep 0.05; done'
    project.write_agent(
        project.script({"text": "never"}),
        hooks={
            "preGeneration": [{"name": "redact", "command": project.example("redact_prompt.py")}],
            "postGeneration": [{"name": "held", "command": held, "timeout": 60}],
        },
    )
    window = start_window()
    session_id = open_session(window)
    with client(window) as http:
        assert ask(http, session_id, f"deploy with {secret} please").status_code == 202
        assert running.read_text() == "up\n"  # the end-of-turn hook runs: the block is decided
        replayed: list[dict[str, Any]] = []
        with http.stream("GET", f"/api/sessions/{session_id}/events") as stream:
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    replayed.append(json.loads(line.removeprefix("data: ")))
                    if replayed[-1]["type"] == "question":
                        break
        release.touch()

    question = replayed[-1]
    assert question["text"] == "[prompt blocked by a hook: the question holds an AWS access key id]"
