"""Session files on a real file system: format, replay, torn lines, lookup, permissions, failures."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hookgate.errors import SessionError
from hookgate.messages import Message, ToolCall
from hookgate.store.home import default_home
from hookgate.store.session import SessionStore
from runtime.project import Project

CONVERSATION = [
    Message("system", "Be brief."),
    Message("user", 'line one\nline two \u2028 with a separator, ünïcode and "quotes"'),
    Message("assistant", "", tool_calls=(ToolCall("call_1", "read_file", {"path": "a.txt"}),)),
    Message("tool", "contents", tool_call_id="call_1"),
    Message("assistant", "Done."),
]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "home")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


def test_header_then_records(store: SessionStore) -> None:
    session = store.create(agent_file="/p/hookgate.yaml", cwd="/p")
    session.append_message(CONVERSATION[1])
    session.append_event("turn_end", {"outcome": "answer"})
    header, message, event = lines(session.path)
    assert header == {
        "type": "session", "id": session.id, "created": header["created"],
        "agent_file": "/p/hookgate.yaml", "cwd": "/p", "version": 1,
    }  # fmt: skip
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", header["created"])
    assert message == {"type": "message", "message": CONVERSATION[1].to_json()}
    assert event == {"type": "event", "kind": "turn_end", "data": {"outcome": "answer"}}
    assert session.path == store.home / "sessions" / f"{session.id}.jsonl"
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", session.id)


def test_replay_returns_what_was_appended(store: SessionStore) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    for message in CONVERSATION:
        session.append_message(message)
    session.append_event("notice", {"text": "hi"})
    reopened = store.open(session.id)
    assert reopened.messages() == CONVERSATION
    assert [(e.kind, e.data) for e in reopened.events()] == [("notice", {"text": "hi"})]


def test_torn_last_line_is_skipped_and_the_next_append_starts_fresh(store: SessionStore) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    session.append_message(CONVERSATION[1])
    with session.path.open("ab") as file:  # what a crash mid-write leaves
        file.write(b'{"type":"message","message":{"role":"assis')
    assert store.open(session.id).messages() == [CONVERSATION[1]]
    store.open(session.id).append_message(CONVERSATION[4])
    assert store.open(session.id).messages() == [CONVERSATION[1], CONVERSATION[4]]
    assert session.path.read_bytes().endswith(b'"role":"assis\n' + _line(CONVERSATION[4]))


def test_a_torn_multibyte_character_is_skipped_too(store: SessionStore) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    with session.path.open("ab") as file:
        file.write(_line(Message("user", "ü"))[:-4])  # cut inside the two-byte ü
    assert session.messages() == []


def test_malformed_message_record_names_the_line(store: SessionStore) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    with session.path.open("ab") as file:
        file.write(b'{"type":"message","message":{"content":"no role"}}\n')
    with pytest.raises(SessionError, match=rf"{re.escape(str(session.path))}:2: malformed"):
        session.messages()


def test_open_by_id_and_by_unique_prefix(store: SessionStore) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    assert store.open(session.id).path == session.path
    assert store.open(session.id[:-3]).path == session.path


@pytest.mark.parametrize("session_id", ["20200101-000000-abcdef", "../../etc/passwd", ""])
def test_open_unknown_id_says_where_ids_are(store: SessionStore, session_id: str) -> None:
    store.create(agent_file="a.yaml", cwd="/p")
    with pytest.raises(SessionError) as caught:
        store.open(session_id)
    directory = store.home / "sessions"
    assert str(caught.value) == (
        f"no session {session_id!r} in {directory}; session ids are the file names there "
        f"without .jsonl (ls {directory}), or use --continue for the latest"
    )


def test_open_ambiguous_prefix(store: SessionStore) -> None:
    first = store.create(agent_file="a.yaml", cwd="/p")
    second = store.create(agent_file="a.yaml", cwd="/p")
    with pytest.raises(
        SessionError, match=f"is ambiguous: {first.id}, {second.id}|{second.id}, {first.id}"
    ):
        store.open(first.id[:2])  # the century


def test_open_refuses_a_newer_version(store: SessionStore) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    text = session.path.read_text().replace('"version":1', '"version":2')
    session.path.write_text(text)
    with pytest.raises(
        SessionError, match="is a version 2 session file; this hookgate reads version 1"
    ):
        store.open(session.id)


def test_latest_is_the_one_written_to_last(store: SessionStore) -> None:
    assert store.latest() is None
    older = store.create(agent_file="a.yaml", cwd="/p")
    newer = store.create(agent_file="a.yaml", cwd="/p")
    os.utime(older.path, (1_000, 1_000))
    os.utime(newer.path, (2_000, 2_000))
    assert _latest_id(store) == newer.id
    os.utime(older.path, (3_000, 3_000))  # resumed and written to since
    assert _latest_id(store) == older.id


def test_latest_of_a_directory(store: SessionStore) -> None:
    here = store.create(agent_file="a.yaml", cwd="/work/here")
    there = store.create(agent_file="a.yaml", cwd="/work/there")
    os.utime(here.path, (1_000, 1_000))
    os.utime(there.path, (2_000, 2_000))
    assert _latest_id(store, cwd="/work/here/") == here.id
    assert _latest_id(store) == there.id
    assert store.latest(cwd="/elsewhere") is None


def test_latest_of_an_agent_file(store: SessionStore) -> None:
    """`-c` after a hand-off continues this agent's session, not the asked agent's."""
    mine = store.create(agent_file="/p/hookgate.yaml", cwd="/p")
    asked = store.create(agent_file="/p/agents/reviewer.yaml", cwd="/p")
    os.utime(mine.path, (1_000, 1_000))
    os.utime(asked.path, (2_000, 2_000))
    assert _latest_id(store, cwd="/p", agent_file="/p/./hookgate.yaml") == mine.id
    assert _latest_id(store, cwd="/p") == asked.id
    assert store.latest(agent_file="/p/other.yaml") is None
    relative = store.create(agent_file="hookgate.yaml", cwd="/p")  # as `hookgate` wrote it
    os.utime(relative.path, (3_000, 3_000))
    assert _latest_id(store, cwd="/p", agent_file="/p/hookgate.yaml") == relative.id


def test_list_skips_files_that_are_not_sessions(store: SessionStore) -> None:
    sessions = [store.create(agent_file=f"{n}.yaml", cwd="/p") for n in range(3)]
    (store.home / "sessions" / "junk.jsonl").write_text("not json\n")
    (store.home / "sessions" / "empty.jsonl").touch()
    infos = store.list()
    assert [info.id for info in infos] == sorted(s.id for s in sessions)
    assert [info.agent_file for info in sorted(infos, key=lambda i: i.path)] == [
        s.info.agent_file for s in sorted(sessions, key=lambda s: s.path)
    ]


def test_list_of_a_store_never_written_to(store: SessionStore) -> None:
    assert store.list() == []


def test_files_are_private_whatever_the_umask(store: SessionStore) -> None:
    old_umask = os.umask(0)
    try:
        session = store.create(agent_file="a.yaml", cwd="/p")
        session.append_message(CONVERSATION[1])
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(session.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(session.path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.home.stat().st_mode) == 0o700


def test_fsync_store_appends_the_same(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, fsync=True)
    session = store.create(agent_file="a.yaml", cwd="/p")
    session.append_message(CONVERSATION[0])
    assert store.open(session.id).messages() == [CONVERSATION[0]]


def test_event_data_that_is_not_json_is_a_session_error(store: SessionStore) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    with pytest.raises(SessionError, match="cannot record in"):
        session.append_event("odd", {"value": object()})
    assert len(lines(session.path)) == 1


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"HOOKGATE_HOME": "/h", "XDG_STATE_HOME": "/x"}, "/h"),
        ({"XDG_STATE_HOME": "/x", "HOME": "/u"}, "/x/hookgate"),
        ({"XDG_STATE_HOME": "relative", "HOME": "/u"}, "/u/.local/state/hookgate"),
        ({"HOOKGATE_HOME": "", "HOME": "/u"}, "/u/.local/state/hookgate"),
    ],
)
def test_default_home(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str) -> None:
    monkeypatch.setenv("HOME", env.get("HOME", "/u"))  # Path.home() reads it
    assert default_home(env) == Path(expected)


# Failures, each in a process of its own: one without the privilege to ignore file
# modes, one whose file-size limit stands in for a full disk.

_CHILD_READ_ONLY = """
import json, sys
from pathlib import Path
from hookgate.errors import SessionError
from hookgate.messages import Message
from hookgate.store.session import SessionStore

def attempt(action):
    try:
        action()
        return "ok"
    except SessionError as exc:
        return str(exc)

home, session_id = Path(sys.argv[1]), sys.argv[2]
store = SessionStore(home)
session = store.open(session_id)
print(json.dumps({
    "create": attempt(lambda: store.create(agent_file="a.yaml", cwd="/p")),
    "create_home": attempt(lambda: SessionStore(home / "sub").create(agent_file="a", cwd="/p")),
    "append": attempt(lambda: session.append_message(Message("user", "more"))),
    "messages": [m.content for m in session.messages()],
}))
"""

_CHILD_FULL_DISK = """
import json, resource, sys
from pathlib import Path
from hookgate.errors import SessionError
from hookgate.messages import Message
from hookgate.store.session import SessionStore

store = SessionStore(Path(sys.argv[1]))
session = store.create(agent_file="a.yaml", cwd="/p")
session.append_message(Message("user", "first"))
before = session.path.stat().st_size
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (before + 20, hard))  # room for 20 bytes
outcome = {"before": before}
try:
    session.append_message(Message("user", "x" * 1000))
except SessionError as exc:
    outcome["append"] = str(exc)
outcome["after"] = session.path.stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (10, hard))
try:
    store.create(agent_file="a.yaml", cwd="/p")
except SessionError as exc:
    outcome["create"] = str(exc)
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
session.append_message(Message("user", "after"))
outcome["messages"] = [m.content for m in session.messages()]
outcome["files"] = len(list(store.directory.iterdir()))
print(json.dumps(outcome))
"""


def _run_child(script: str, *args: str, unprivileged: bool = False) -> dict[str, Any]:
    prefix: list[str] = []
    if unprivileged and os.geteuid() == 0:
        # root ignores file modes; without these capabilities it obeys them
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root and setpriv(1) is missing to drop privileges")
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]
    done = subprocess.run(
        [*prefix, sys.executable, "-c", script, *args],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture
def read_only_home(store: SessionStore) -> Iterator[tuple[SessionStore, str, bytes]]:
    """A store holding one session, then made read-only: (store, session id, file bytes)."""
    session = store.create(agent_file="a.yaml", cwd="/p")
    session.append_message(Message("user", "kept"))
    original = session.path.read_bytes()
    session.path.chmod(0o400)
    for directory in (store.directory, store.home):
        directory.chmod(0o500)
    yield store, session.id, original
    for directory in (store.home, store.directory):
        directory.chmod(0o700)


def test_read_only_home_is_a_session_error_and_keeps_the_file(
    read_only_home: tuple[SessionStore, str, bytes],
) -> None:
    store, session_id, original = read_only_home
    outcome = _run_child(_CHILD_READ_ONLY, str(store.home), session_id, unprivileged=True)
    path = store.directory / f"{session_id}.jsonl"
    hint = "(set HOOKGATE_HOME to a writable directory)"
    assert outcome["create"].startswith(f"cannot write the session file {store.directory}/")
    assert outcome["create"].endswith(f": Permission denied {hint}")
    assert outcome["create_home"] == (
        f"cannot create the session directory {store.home}/sub/sessions: Permission denied {hint}"
    )
    assert outcome["append"] == f"cannot write the session file {path}: Permission denied {hint}"
    assert outcome["messages"] == ["kept"]
    assert path.read_bytes() == original
    assert [p.name for p in store.directory.iterdir()] == [path.name]


def test_full_disk_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    outcome = _run_child(_CHILD_FULL_DISK, str(tmp_path))
    assert outcome["append"].endswith(
        ": File too large (set HOOKGATE_HOME to a writable directory)"
    )
    assert outcome["after"] == outcome["before"]  # the 20 bytes that fitted were cut again
    assert outcome["create"].startswith("cannot write the session file")
    assert outcome["files"] == 1  # the half-made file was removed
    assert outcome["messages"] == ["first", "after"]


def _line(message: Message) -> bytes:
    record = {"type": "message", "message": message.to_json()}
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _latest_id(store: SessionStore, cwd: str | None = None, agent_file: str | None = None) -> str:
    latest = store.latest(cwd=cwd, agent_file=agent_file)
    assert latest is not None
    return latest.id


def test_a_home_open_to_others_is_made_private_with_a_notice(project: Project) -> None:
    project.write_agent(project.script({"text": "done"}))
    sessions = project.home / "sessions"
    sessions.mkdir(parents=True)
    project.home.chmod(0o755)
    sessions.chmod(0o770)

    done = project.hookgate("-p", "Go.")

    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    assert done.stderr.splitlines() == [
        f"hookgate: {project.home} was open to other users (mode 0755); made it private (0700)",
        f"hookgate: {sessions} was open to other users (mode 0770); made it private (0700)",
    ]
    assert stat.S_IMODE(project.home.stat().st_mode) == 0o700
    assert stat.S_IMODE(sessions.stat().st_mode) == 0o700
    again = project.hookgate("-c", "-p", "Go.")
    assert (again.returncode, again.stderr) == (0, "")
