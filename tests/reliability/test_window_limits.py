"""The window's bounds: sessions kept open, request bodies, file descriptors.

A window left open for days must not grow without end: it keeps `--max-sessions`
sessions (the one idle the longest closed first, or by `POST .../close`), reads no body
past `MAX_BODY`, and answers a shortage of file descriptors 503, said once on stderr.
"""

from __future__ import annotations

import json
import resource
import subprocess
import time
from collections.abc import Callable, Iterator

import httpx2
import pytest

from hookgate.frontends.window.app import MAX_BODY
from runtime.project import HOOKGATE, RUN_TIMEOUT, Project
from window.conftest import Window, start_window, stop
from window.test_window_guard import ask, client, open_session

__all__ = ["start_window"]  # the fixture


def open_ids(http: httpx2.Client) -> list[str]:
    answer = http.get("/api/sessions")
    assert answer.status_code == 200, answer.text
    return [row["id"] for row in answer.json()["open"]]


def wait_idle(http: httpx2.Client, session_id: str) -> None:
    """Until the session's turn has ended (its event stream says `turn_end`)."""
    with http.stream("GET", f"/api/sessions/{session_id}/events") as events:
        for line in events.iter_lines():
            if line.startswith("data:") and json.loads(line[5:])["type"] == "turn_end":
                return
    pytest.fail(f"the turn of {session_id} never ended")


@pytest.mark.reliability("load")
def test_one_session_past_the_cap_closes_the_one_idle_the_longest(
    project: Project, start_window: Callable[..., Window]
) -> None:
    """`--max-sessions 2` and a third session: the one idle the longest is closed, the one used last kept."""
    project.write_agent(project.script({"text": "fine"}))
    window = start_window("--max-sessions", "2")
    first, second = open_session(window), open_session(window)
    with client(window) as http:
        assert ask(http, first, "hello").status_code == 202
        wait_idle(http, first)  # the first was used last: the second is idle the longest
        third = open_session(window)
        assert open_ids(http) == [first, third]
        assert http.get(f"/api/sessions/{second}/hooks").status_code == 404
    code, err = stop(window)
    assert code == 130, err
    assert "Traceback" not in err


@pytest.mark.reliability("load")
def test_a_closed_session_is_gone_and_its_stream_ends(
    project: Project, start_window: Callable[..., Window]
) -> None:
    """`POST /api/sessions/ID/close`: the session is closed (saved, not open), its event stream ends."""
    project.write_agent(project.script({"text": "fine"}))
    window = start_window()
    session_id = open_session(window)
    with client(window) as http, client(window) as other:
        with http.stream("GET", f"/api/sessions/{session_id}/events") as events:
            closed = other.post(f"/api/sessions/{session_id}/close")
            kinds = [
                json.loads(line[5:])["type"]
                for line in events.iter_lines()
                if line.startswith("data:")
            ]
        assert kinds[-1] == "closed"  # and the stream ended
        assert (closed.status_code, closed.json()) == (200, {"closed": session_id})
        assert open_ids(http) == []
        assert session_id in [row["id"] for row in http.get("/api/sessions").json()["saved"]]
        again = http.post(f"/api/sessions/{session_id}/close")
        assert again.status_code == 404
    _code, err = stop(window)
    assert "Traceback" not in err


@pytest.mark.reliability("load")
def test_with_every_session_running_a_turn_a_new_one_is_refused(
    project: Project, start_window: Callable[..., Window]
) -> None:
    """Every open session running a turn, at the cap: a new one is refused (503), none is cut short."""
    project.write_agent(project.script({"delay": 60, "text": "late"}))
    window = start_window("--max-sessions", "1")
    busy = open_session(window)
    with client(window) as http:
        assert ask(http, busy, "take your time").status_code == 202
        refused = http.post("/api/sessions", json={})
        assert refused.status_code == 503
        assert "running a turn" in refused.json()["error"]
        assert open_ids(http) == [busy]
        assert http.post(f"/api/sessions/{busy}/close").status_code == 200  # cancels it
        assert http.post("/api/sessions", json={}).status_code == 201
    _code, err = stop(window)
    assert "Traceback" not in err


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    yield b'{"question": "'
    for _ in range(total // size):
        yield b"x" * size
    yield b'"}'


@pytest.mark.reliability("load")
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_body_past_the_cap_is_413_and_not_read_whole(
    project: Project, start_window: Callable[..., Window], declared: bool
) -> None:
    """A 20 MB request body to the window: 413 as it is read, not read whole; the window serves on.

    A question of 20 MB: refused as too large (not read, then found too long), whether
    its length is declared or it streams in chunks."""
    project.write_agent(project.script({"text": "fine"}))
    window = start_window()
    session_id = open_session(window)
    total = 20 * 1024 * 1024
    body = b"".join(_chunks(total)) if declared else _chunks(total)
    with client(window) as http:
        try:
            answer = http.post(f"/api/sessions/{session_id}/turns", content=body)
        except httpx2.WriteError:  # the server answered and closed before the upload ended
            answer = None
        if answer is not None:
            assert answer.status_code == 413, answer.text
            assert f"{MAX_BODY:,} bytes" in answer.json()["error"]
    with client(window) as http:
        assert ask(http, session_id, "a short one").status_code == 202
    _code, err = stop(window)
    assert "Traceback" not in err


#: The window's file descriptor limit in the test below: enough to start and serve a few
#: sessions, not many.
FEW_DESCRIPTORS = 40


@pytest.mark.reliability("load")
def test_running_out_of_file_descriptors_is_503_said_once(project: Project) -> None:
    """The window out of file descriptors: each request that needs one is 503, said once on stderr, no traceback.

    Each session holds descriptors; past the process's limit, opening one more fails.
    Each such request is answered 503 and the shortage said once on stderr, where every
    request was a 500 and a traceback."""
    project.write_agent(project.script({"text": "fine"}))
    project.trust()

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (FEW_DESCRIPTORS, FEW_DESCRIPTORS))

    process = subprocess.Popen(
        [str(HOOKGATE), "window", "--no-browser", "--max-sessions", "1000"],
        cwd=project.dir, env=project.env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=few_descriptors,
    )  # fmt: skip
    assert process.stdout is not None
    window = Window(process.stdout.readline().strip(), process)
    statuses: list[int] = []
    try:
        with client(window) as http:  # one connection: the server accepts no other
            deadline = time.monotonic() + RUN_TIMEOUT
            while statuses.count(503) < 5 and time.monotonic() < deadline:
                reply = http.post("/api/sessions", json={})
                statuses.append(reply.status_code)
                last = reply.text
            listing = http.get("/api/sessions").status_code  # reads the saved sessions
    finally:
        _code, err = stop(window)
    assert statuses.count(503) == 5, (len(statuses), statuses[-3:], last, err[-2000:])
    assert set(statuses) == {201, 503}, statuses  # sessions, then the shortage: no 500
    assert statuses.index(503) > 0
    assert listing in (200, 503)  # not a 500 and a traceback
    assert "Traceback" not in err
    assert err.count("out of file descriptors") == 1, err
