"""Session files: one append-only JSONL file per session under `$HOOKGATE_HOME/sessions/`.

Line 1 is a header; every later line is a message or an event record, written with a
single `write` as it happens, so a crash loses at most the line being written. Reading
skips a torn line, and the next append starts on a fresh line. A session in use holds
the file's lock (`sessionlock`): one writer at a time. Failures are `SessionError`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path

from hookgate.errors import SessionError
from hookgate.hooks.records import NamedTuple
from hookgate.messages import Message
from hookgate.store.home import default_home
from hookgate.store.lock import open_locked

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The format of the files this module writes; a newer one is refused, not misread.
SESSION_VERSION = 1
#: Session files and their directory are private: history can hold secrets.
FILE_MODE = 0o600
DIR_MODE = 0o700
#: Bytes read for a header line; a longer first line is not a session header.
MAX_HEADER = 64 * 1024
#: Fresh ids tried before giving up when a new id is already taken.
CREATE_ATTEMPTS = 5
_SUFFIX = ".jsonl"
_ID_CHARS = re.compile(r"[0-9A-Za-z_-]+\Z")
_WRITE_HINT = "set HOOKGATE_HOME to a writable directory"


def new_session_id() -> str:
    """A fresh id that sorts by creation time: `YYYYMMDD-HHMMSS-xxxxxx` (UTC, random hex).

    `os.urandom`, as `secrets.token_hex` does: `secrets` imports `hashlib` (OpenSSL)."""
    return f"{id_stamp()}-{os.urandom(3).hex()}"


def id_stamp(now: float | None = None) -> str:
    """The time a session id starts with, `YYYYMMDD-HHMMSS` (UTC; `now` in seconds since
    the epoch, default now): every id that starts so sorts by creation time."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))


def utc_now() -> str:
    """Now in ISO 8601, UTC, to the millisecond: `2026-12-01T19:20:00.123+00:00`, as
    `datetime`'s `isoformat(timespec="milliseconds")` writes it (without importing it:
    a session's start has no other use for it)."""
    now = time.time_ns()
    seconds, millis = divmod(now // 1_000_000, 1000)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{millis:03d}+00:00"


class SessionInfo(NamedTuple):
    """What the header and the file system say about a session, without reading it all."""

    id: str
    path: Path
    created: str
    """ISO 8601 time of creation, UTC."""
    updated: float
    """Seconds since the epoch of the last write (the file's mtime)."""
    agent_file: str
    cwd: str


class SessionEvent(NamedTuple):
    """A record that is not part of the conversation: a notice, a turn marker..."""

    kind: str
    data: Mapping[str, Any]


class Session:
    """One session file, appended to as the conversation goes.

    Each append opens the file, writes one whole line with one `write` and closes it:
    the line is in the kernel when the call returns, so a crash or kill of hookgate
    loses nothing already appended. `fsync` (off by default: a disk flush per step)
    guards against a power loss or system crash too. A failed append takes back the
    bytes it wrote if they are still the end of the file (nothing another writer
    appended is ever cut) and raises `SessionError`. `lock` makes this the one writer.
    """

    def __init__(self, info: SessionInfo, *, fsync: bool = False) -> None:
        self.info = info
        self.id = info.id
        self.path = info.path
        self._fsync = fsync
        self._lock_fd: int | None = None

    def lock(self) -> None:
        """Hold the session's lock until `close`; `SessionBusy` names who else holds it."""
        if self._lock_fd is None:
            self._lock_fd = open_locked(self.path, self.id)

    def close(self) -> None:
        """Release the lock (if held); appending still works, unguarded."""
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)

    def append_message(self, message: Message) -> None:
        """Record one message of the conversation."""
        self._append({"type": "message", "message": message.to_json()})

    def append_event(self, kind: str, data: Mapping[str, Any]) -> None:
        """Record an event (`data` must be JSON-serialisable)."""
        self._append({"type": "event", "kind": kind, "data": dict(data)})

    def append_entries(self, entries: Iterable[Message | SessionEvent]) -> None:
        """Record messages and events in order, with one `write`: one open and close of
        the file for them all, and no other writer's line among them."""
        records = [
            {"type": "event", "kind": e.kind, "data": dict(e.data)}
            if isinstance(e, SessionEvent)
            else {"type": "message", "message": e.to_json()}
            for e in entries
        ]
        if records:
            self._append_line(b"".join(_encode(record, self.path) for record in records))

    def entries(self) -> list[Message | SessionEvent]:
        """The messages and events as recorded, in order; torn lines are skipped."""
        return self.entries_from(self.read())

    def entries_from(self, data: bytes, start: int | None = None) -> list[Message | SessionEvent]:
        """The entries of `data` (this file's bytes, from `read`) from the line that
        begins at offset `start` on (default: the first after the header)."""
        if start is None:
            start = data.find(b"\n") + 1 if b"\n" in data else len(data)
        entries: list[Message | SessionEvent] = []
        # Split on b"\n" only: str.splitlines would also split inside text at U+2028.
        for index, line in enumerate(data[start:].split(b"\n")):
            record = parse_record(line)
            if record is None:
                continue
            if record.get("type") == "event":
                entries.append(SessionEvent(str(record.get("kind")), record.get("data") or {}))
            elif record.get("type") == "message":
                # The line's number is counted only for an error: a count of the file.
                number = partial(_line_number, data, start, index)
                entries.append(self.message_from(record, number))
        return entries

    def messages(self) -> list[Message]:
        """The conversation as recorded, in order; torn lines are skipped."""
        return [entry for entry in self.entries() if isinstance(entry, Message)]

    def events(self) -> list[SessionEvent]:
        """The events as recorded, in order; torn lines are skipped."""
        return [entry for entry in self.entries() if isinstance(entry, SessionEvent)]

    def read(self) -> bytes:
        """The file's bytes, header included; `SessionError` where it cannot be read."""
        try:
            return self.path.read_bytes()
        except OSError as exc:
            raise SessionError(f"cannot read the session file {self.path}: {exc.strerror}") from exc

    def message_from(self, record: Mapping[str, Any], line: int | Callable[[], int]) -> Message:
        """The message of a message `record` read from line `line` of this file (a
        callable where the number costs a count: it is needed only for an error)."""
        try:
            return Message.from_json(record["message"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            number = line() if callable(line) else line
            raise SessionError(f"{self.path}:{number}: malformed message record") from exc

    def _append(self, record: Mapping[str, Any]) -> None:
        self._append_line(_encode(record, self.path))

    def _append_line(self, line: bytes) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except OSError as exc:
            raise _write_error(self.path, exc) from exc
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # the last line is torn: start on a fresh one
            _append_all(fd, line)
            if self._fsync:
                os.fsync(fd)
        except OSError as exc:
            raise _write_error(self.path, exc) from exc
        finally:
            os.close(fd)


class SessionStore:
    """The session files under `home/sessions/` (`home` defaults to `default_home()`)."""

    def __init__(self, home: Path | None = None, *, fsync: bool = False) -> None:
        self.home = default_home() if home is None else home
        self.directory = self.home / "sessions"
        self._fsync = fsync

    def create(
        self, *, agent_file: str, cwd: str, session_id: str | None = None, reuse: bool = False
    ) -> Session:
        """Start a new session file (mode 0600, in a 0700 directory) holding its header,
        named `session_id` (letters, digits, `-`, `_`): the id a caller that goes on
        without the file (it could not be written) names it by too. Where that file
        exists already, `reuse` opens it (another process of the same agent session made
        it first); otherwise a fresh id is drawn, as when none is given."""
        self._make_directory()
        for attempt in range(CREATE_ATTEMPTS):
            if session_id is None or (attempt and not reuse):
                session_id = new_session_id()
            path = self.directory / f"{session_id}{_SUFFIX}"
            created = utc_now()
            header = {"type": "session", "id": session_id, "created": created,
                      "agent_file": agent_file, "cwd": cwd, "version": SESSION_VERSION}  # fmt: skip
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
            except FileExistsError:
                if reuse:
                    return self._load(path)
                continue
            except OSError as exc:
                raise _write_error(path, exc) from exc
            try:
                _append_all(fd, _encode(header, path))
            except OSError as exc:
                path.unlink(missing_ok=True)
                raise _write_error(path, exc) from exc
            finally:
                os.close(fd)
            return self._load(path)
        raise SessionError(f"could not pick a free session id in {self.directory}")

    def open(self, session_id: str) -> Session:
        """The session `session_id`, or the only one whose id starts with it."""
        if _ID_CHARS.match(session_id):
            path = self.directory / f"{session_id}{_SUFFIX}"
            if path.is_file():
                return self._load(path)
            matches = [info for info in self.list() if info.id.startswith(session_id)]
            if len(matches) == 1:
                return self._load(matches[0].path)
            if matches:
                ids = ", ".join(info.id for info in matches)
                raise SessionError(f"session id {session_id!r} is ambiguous: {ids}")
        raise SessionError(
            f"no session {session_id!r} in {self.directory}; session ids are the file names "
            f"there without {_SUFFIX} (ls {self.directory}), or use --continue for the latest"
        )

    def latest(self, *, cwd: str | None = None, agent_file: str | None = None) -> Session | None:
        """The session written to last, or None; of those started in `cwd` with
        `agent_file`, where given (an asked agent's sessions share the directory)."""
        sessions = self.of(cwd=cwd, agent_file=agent_file)
        if not sessions:
            return None
        return self._load(max(sessions, key=lambda info: (info.updated, info.id)).path)

    def of(self, *, cwd: str | None = None, agent_file: str | None = None) -> list[SessionInfo]:
        """`list()`, of the sessions started in `cwd` with `agent_file`, where given."""
        sessions = self.list()
        if cwd is not None:
            sessions = [info for info in sessions if _same_path(info.cwd, cwd)]
        if agent_file is not None:
            sessions = [info for info in sessions if _same_path(_agent_path(info), agent_file)]
        return sessions

    def list(self) -> list[SessionInfo]:
        """Every readable session, oldest first; files without a valid header are left out."""
        try:
            paths = sorted(self.directory.glob(f"*{_SUFFIX}"))
        except OSError:
            return []
        infos = []
        for path in paths:
            with contextlib.suppress(SessionError):
                infos.append(_read_info(path))
        return infos

    def make_private(self, notify: Callable[[str], None]) -> None:
        """Take other users' access away from the home and its sessions directory.

        History can hold secrets: a directory looser than 0700 (made by hand, or by an
        older hookgate) is tightened, with a notice; one we cannot change is a notice.
        """
        for directory in (self.home, self.directory):
            try:
                mode = stat.S_IMODE(directory.stat().st_mode)
            except OSError:
                continue  # not made yet (it will be, 0700), or not ours to look at
            if not mode & ~DIR_MODE:
                continue
            try:
                directory.chmod(mode & DIR_MODE)
            except OSError as exc:
                notify(f"{directory} is open to other users (mode {mode:04o}) and cannot be "
                       f"made private: {exc.strerror}")  # fmt: skip
            else:
                notify(f"{directory} was open to other users (mode {mode:04o}); "
                       f"made it private ({mode & DIR_MODE:04o})")  # fmt: skip

    def _load(self, path: Path) -> Session:
        return Session(_read_info(path), fsync=self._fsync)

    def _make_directory(self) -> None:
        try:
            self.home.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            self.directory.mkdir(mode=DIR_MODE, exist_ok=True)
        except OSError as exc:
            raise SessionError(
                f"cannot create the session directory {self.directory}: "
                f"{exc.strerror or exc} ({_WRITE_HINT})"
            ) from exc


def _line_number(data: bytes, start: int, index: int) -> int:
    """The number of the `index`th line from offset `start` of `data` (1 for the first)."""
    return data.count(b"\n", 0, start) + index + 1


def parse_record(line: bytes) -> dict[str, Any] | None:
    """The record a line holds, or None for what a crash mid-write leaves (a torn,
    empty or non-UTF-8 line, or JSON that is not an object). Records of a type this
    version does not know are returned for the caller to skip."""
    try:  # decoded here: `json.loads` of bytes first guesses their encoding
        record = json.loads(line.decode())
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _read_info(path: Path) -> SessionInfo:
    try:
        with path.open("rb") as file:
            first = file.readline(MAX_HEADER)
            updated = os.fstat(file.fileno()).st_mtime
    except OSError as exc:
        raise SessionError(f"cannot read the session file {path}: {exc.strerror}") from exc
    not_ours = SessionError(f"{path} is not a hookgate session file (bad header line)")
    try:
        header = json.loads(first)
    except ValueError as exc:
        raise not_ours from exc
    if not isinstance(header, dict) or header.get("type") != "session":
        raise not_ours
    if header.get("version") != SESSION_VERSION:
        raise SessionError(
            f"{path} is a version {header.get('version')!r} session file; "
            f"this hookgate reads version {SESSION_VERSION}"
        )
    try:
        fields = [str(header[key]) for key in ("id", "created", "agent_file", "cwd")]
    except KeyError as exc:
        raise not_ours from exc
    session_id, created, agent_file, cwd = fields
    return SessionInfo(session_id, path, created, updated, agent_file, cwd)


def _encode(record: Mapping[str, Any], path: Path) -> bytes:
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        try:
            return (text + "\n").encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: keep it, escaped
            return (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")
    except (TypeError, ValueError) as exc:
        raise SessionError(f"cannot record in {path}: {exc}") from exc


def _append_all(fd: int, data: bytes) -> None:
    """Append `data` through `fd` (opened `O_APPEND`); on failure take back our part, re-raise.

    Only our own bytes are cut, and only while they are the end of the file: where the
    kernel put each piece is read back from the offset, never from a size read before
    the write (another writer may have appended since; cutting to that size lost its
    acknowledged lines). If someone appended after us, the torn piece stays: reading
    skips it, and the next append starts on a fresh line.
    """
    start: int | None = None  # where our bytes begin, while they are contiguous
    end = 0
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            end = os.lseek(fd, 0, os.SEEK_CUR)
            if start is None:
                start = end - written
            elif end - written != start + (len(data) - len(view)):
                start = -1  # another writer came between our pieces: leave them be
            view = view[written:]
    except OSError:
        with contextlib.suppress(OSError):
            if start is not None and start >= 0 and os.fstat(fd).st_size == end:
                os.ftruncate(fd, start)
        raise


def _write_error(path: Path, exc: OSError) -> SessionError:
    return SessionError(
        f"cannot write the session file {path}: {exc.strerror or exc} ({_WRITE_HINT})"
    )


def _same_path(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


def _agent_path(info: SessionInfo) -> str:
    """The session's agent file as an absolute path (a relative one is from its cwd)."""
    return os.path.join(info.cwd, info.agent_file)
