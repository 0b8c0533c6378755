"""Two writers of one session: refused while one lives, harmless in files they left behind.

A second `hookgate -c` of a live session exits with one line naming the holder; two
writers that share a file anyway (without the lock: an older hookgate) never cut each
other's acknowledged lines when the disk fills; and a history two writers interleaved
reads back as a conversation a strict server accepts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hookgate.messages import Message, ToolCall
from hookgate.store.session import SessionStore
from reliability.faultkit import PROCESS_MARGIN_S, assert_nothing_left, bounded, marked_env
from reliability.profile import scale
from runtime.project import HOOKGATE, RUN_TIMEOUT, Project, chat_messages, served_model
from support.chat_server import ChatServer, ServedReply
from support.openai_rules import assert_strict_server_accepts, strict_violations

#: A preGeneration hook that says the turn has begun, then holds it until released
#: (at most 20 s: a failed case must not leave it waiting forever).
HOLD_TURN = (
    "touch started; i=0; while [ ! -e release ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done"
)


def wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    """Wait until `path` exists; fail if `process` ends first or it takes too long."""
    with bounded(PROCESS_MARGIN_S):
        while not path.exists():
            assert process.poll() is None, process.communicate()
            time.sleep(0.02)


@pytest.mark.reliability("session")
def test_second_continue_of_a_live_session_is_refused(project: Project, mark: str) -> None:
    """Two `hookgate -c` on one session at once: the second exits 1 naming the holder's pid; nothing interleaves."""
    model = project.script({"text": "answer"})
    hold = {"name": "hold", "command": HOLD_TURN, "timeout": 30}
    env = marked_env(project, mark)
    project.write_agent(model)
    assert project.hookgate("-p", "Zero", env=env).returncode == 0  # the session to continue
    project.write_agent(model, hooks={"preGeneration": [hold]})
    project.trust()
    first = subprocess.Popen(
        [str(HOOKGATE), "-c", "-p", "First"],
        cwd=project.dir, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(project.dir / "started", first)
        second = project.hookgate("-c", "-p", "Second", env=env)
    finally:
        (project.dir / "release").touch()
        out, err = first.communicate(timeout=RUN_TIMEOUT)

    session_id = project.session_id()
    assert (second.returncode, second.stdout) == (1, ""), second.stderr
    assert second.stderr.splitlines() == [
        f"hookgate: session {session_id} is in use by hookgate (pid {first.pid}); "
        "leave that one first, or start a new session (without -c/-r)"
    ]
    assert (first.returncode, out) == (0, "answer\n"), err
    third = project.hookgate("-c", "-p", "Third", env=env)  # the lock went with the process
    assert third.returncode == 0, third.stderr
    questions = [m["content"] for m in project.messages() if m["role"] == "user"]
    assert questions == ["Zero", "First", "Third"]
    assert_nothing_left(mark)


#: One writer of a shared session file: appends `count` events (or, with a size limit
#: standing in for a full disk, until told to stop), printing which it was told landed.
_WRITER = """
import json, resource, sys
from pathlib import Path
from hookgate.errors import SessionError
from hookgate.store.session import SessionStore

home, session_id, who, count, limit, stop = sys.argv[1:]
session = SessionStore(Path(home)).open(session_id)
if int(limit):
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), resource.RLIM_INFINITY))
print("ready", flush=True)
acknowledged = []
n = 0
while n < int(count) and not Path(stop).exists():
    try:
        session.append_event("write", {"who": who, "n": n})
        acknowledged.append(n)
    except SessionError:
        pass
    n += 1
print(json.dumps(acknowledged), flush=True)
"""
#: Appends per round by the writer whose disk is not full.
APPENDS = scale(300, 2000)
ROUNDS = scale(3, 100)


def start_writer(
    session_path: Path, who: str, count: int, limit: int, stop: Path
) -> subprocess.Popen[str]:
    home = session_path.parent.parent
    process = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(home), session_path.stem, who, str(count),
         str(limit), str(stop)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    assert _read_exactly(process.stdout.fileno(), READY) == READY, process.communicate()
    return process


#: What a writer prints once it has its session open (and its size limit set).
READY = b"ready\n"


def _read_exactly(fd: int, expected: bytes) -> bytes:
    """As many bytes as `expected` has, read from the pipe `fd` itself and never more:
    `communicate` reads the rest from the same pipe, past anything a buffered reader
    (`readline`) had taken in, so a writer quick enough to print its answer before we
    read its "ready" would have lost it."""
    read = b""
    while len(read) < len(expected):
        chunk = os.read(fd, len(expected) - len(read))
        if not chunk:
            break
        read += chunk
    return read


def acknowledged(process: subprocess.Popen[str]) -> list[int]:
    out, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 0, err
    result: list[int] = json.loads(out)
    return result


@pytest.mark.reliability("session")
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_two_writers_on_a_full_disk_lose_no_acknowledged_line(tmp_path: Path, round_: int) -> None:
    """Two unlocked writers of one file, one on a full disk (a file-size limit): every append the other was told landed is there."""
    session = SessionStore(tmp_path / "home").create(agent_file="a.yaml", cwd="/p")
    full = session.path.stat().st_size  # not one byte more fits for the first writer
    stop = tmp_path / "stop"
    failing = start_writer(session.path, "full", 10**9, full, stop)
    try:
        healthy = start_writer(session.path, "healthy", APPENDS, 0, stop)
        landed = acknowledged(healthy)
    finally:
        stop.touch()
        refused = acknowledged(failing)

    assert refused == []
    assert len(landed) == APPENDS
    written = [event.data["n"] for event in session.events() if event.data["who"] == "healthy"]
    assert written == landed, f"lost {len(set(landed) - set(written))} acknowledged lines"


def interleaved_session(home: Path, cwd: Path) -> Path:
    """A session file as two writers of one session leave it: turn B's question lands
    between turn A's call and its result, and B's call reuses A's call id."""
    session = SessionStore(home).create(agent_file=str(cwd / "hookgate.yaml"), cwd=str(cwd))
    call_a = ToolCall("call_1", "shell", {"command": "echo a"})
    call_b = ToolCall("call_1", "shell", {"command": "echo b"})
    for message in (
        Message("user", "Question A"),
        Message("assistant", "", (call_a,)),
        Message("user", "Question B"),
        Message("assistant", "", (call_b,)),
        Message("tool", "a", tool_call_id="call_1"),
        Message("tool", "b", tool_call_id="call_1"),
        Message("assistant", "Answer A"),
        Message("assistant", "Answer B"),
    ):
        session.append_message(message)
    return session.path


@pytest.mark.reliability("session")
def test_interleaved_history_resumes_on_a_strict_server(
    project: Project, chat_server: ChatServer, mark: str
) -> None:
    """Resuming a history two writers interleaved: a strict server accepts it; stray results are left out with a notice."""
    path = interleaved_session(project.home, project.dir)
    on_disk = [m.to_json() for m in SessionStore(project.home).open(path.stem).messages()]
    assert strict_violations(on_disk)  # as written, a strict server refuses it
    project.write_agent(served_model(chat_server.url))
    chat_server.queue(ServedReply(text="resumed"))

    with bounded(PROCESS_MARGIN_S):
        done = project.hookgate("-c", "-p", "Go on", env=marked_env(project, mark))

    assert (done.returncode, done.stdout) == (0, "resumed\n"), done.stderr
    sent = chat_messages(chat_server.requests[0].body)
    assert_strict_server_accepts(sent)
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        "Question A", "Question B", "Go on"
    ]  # fmt: skip
    assert f"left out 1 tool result(s) of {path}" in done.stderr
    assert "Traceback" not in done.stderr
    assert_nothing_left(mark)
