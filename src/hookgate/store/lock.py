"""One writer per session file: an exclusive `flock` held for the life of the session.

The lock is on the session file itself, through a descriptor of its own (closing the
descriptors `Session` appends through does not release it), close-on-exec so no hook
or tool inherits it. Losing the race is `SessionBusy`, naming the holder's pid where
the kernel tells it (`/proc/locks`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from hookgate.errors import SessionError

#: Where Linux lists the file locks held, with the pid that took each.
PROC_LOCKS = Path("/proc/locks")


class SessionBusy(SessionError):
    """Another process holds the session: two writers would interleave their turns."""

    def __init__(self, session_id: str, path: Path, holder: int | None) -> None:
        self.session_id = session_id
        self.path = path
        self.holder = holder
        who = f"hookgate (pid {holder})" if holder is not None else "another hookgate"
        super().__init__(
            f"session {session_id} is in use by {who}; leave that one first, "
            f"or start a new session (without -c/-r)"
        )


def lock_session(fd: int, session_id: str, path: Path) -> None:
    """Take the exclusive lock of the session file open on `fd`; `SessionBusy` if held."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        raise SessionBusy(session_id, path, lock_holder(fd)) from exc
    except OSError as exc:
        raise SessionError(f"cannot lock the session file {path}: {exc.strerror}") from exc


def open_locked(path: Path, session_id: str) -> int:
    """A close-on-exec descriptor of `path` holding its lock; the caller closes it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise SessionError(f"cannot read the session file {path}: {exc.strerror}") from exc
    try:
        lock_session(fd, session_id, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def lock_holder(fd: int) -> int | None:
    """The pid holding a `flock` on the file open on `fd`, or None if it cannot be told."""
    stat = os.fstat(fd)
    device = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    with contextlib.suppress(OSError, ValueError):
        for line in PROC_LOCKS.read_text().splitlines():
            # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5360143 0 EOF"; "->" marks a waiter.
            fields = line.split()
            if "->" not in fields and fields[1:2] == ["FLOCK"] and fields[5] == device:
                return int(fields[4])
    return None
