"""Nothing we start outlives us: a guardian process stops our descendants when we die.

Every process this one starts carries `GUARD_VAR` with a token of ours in its
environment, and so does everything those start, whatever group or session they
move to. A guardian, started once (lazily) in a session of its own, waits on a pipe
that only this process holds; when it reads end of file without a goodbye (we were
killed with SIGKILL, or died without cleaning up), it sends SIGTERM to every process
still carrying our token, gives them `GUARD_GRACE` seconds for their own cleanup,
then SIGKILL. A clean exit says goodbye and reaps the guardian (`atexit`). Linux
(/proc) only; the cost here is one dict entry per spawn, and once per process a
`/bin/sh` that waits (the Python guardian takes its place only when it has work).

`reap_orphans` reaps the exited orphans this process adopted as a subreaper
(`adopt_orphans`), so that a long-lived process (`hookgate acp`) keeps no zombies of
daemons that escaped their hook's group.
"""

from __future__ import annotations

import _thread  # its lock alone: `threading` costs a start-up 1 ms more, for nothing
import atexit
import os
import select
import sys
from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks.process.subreaper import adopt_orphans

#: The environment variable that marks our descendants.
GUARD_VAR = "HOOKGATE_GUARD"
#: Seconds the guardian gives our descendants between SIGTERM and SIGKILL.
GUARD_GRACE = 2.0
#: Seconds between two looks of the guardian for descendants still alive.
_GUARD_POLL = 0.02
#: Seconds a clean exit waits for the dismissed guardian to go (it only has to exit).
DISMISS_WAIT = 1.0

#: The guardian's script, run by path with `-I -S`: the standard library alone.
GUARDIAN_SCRIPT = Path(__file__).with_name("guardian.py")
#: The guardian at rest: a shell waits for our goodbye or our end, and only when we
#: died without one does it become the Python guardian (which then reads end of file
#: at once). A waiting shell costs a millisecond to start where a second interpreter
#: costs ten, paid by every `hooks fire` and every session.
_WAITING_SHELL = "/bin/sh"
_WAIT_THEN_GUARD = 'trap "" INT HUP PIPE; IFS= read -r told; [ -n "$told" ] && exit 0; exec "$@"'

#: The guardian's pid and the write end of its pipe, once started.
_guardian: tuple[int, int] | None = None
_token = ""
_guarded_pid = 0
#: Whether to `adopt_orphans` when the first child is marked (`adopt_orphans_at_first_start`).
_adopt_at_start = False
#: Our pid, as `os.getpid()` says it, kept (and set again in a child `os.fork` made):
#: every hook's start asks whose token to mark it with, and a system call each time
#: costs a hook more than the rest of the look-up.
_pid = os.getpid()


def _forked() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


def guard_token() -> str:
    """Our token, the guardian started on first use (and again in a forked child)."""
    global _guardian, _token, _guarded_pid
    if _guarded_pid != _pid:
        if _adopt_at_start:  # before the child that asked for the token starts
            adopt_orphans()
        _token = f"{os.getpid()}-{os.urandom(8).hex()}"  # what secrets.token_hex does
        _guarded_pid = os.getpid()
        _guardian = _start_guardian(_token)
    return _token


def adopt_orphans_at_first_start() -> None:
    """`adopt_orphans` when this process starts its first child (every child of ours is
    marked first), not now: a command that starts none (`-p` answered without a hook or
    a tool) does not pay for it, or for ctypes (2 ms). A forked child adopts its own."""
    global _adopt_at_start
    _adopt_at_start = True


def guarded(env: Mapping[str, str]) -> dict[str, str]:
    """`env` for a child of ours: marked with our token, so the guardian can find it."""
    return {**env, GUARD_VAR: guard_token()}


def is_guarded(env: Mapping[str, str]) -> bool:
    """Whether `env` carries our token already (a forked child's differs from ours)."""
    return env.get(GUARD_VAR) == guard_token()


def _start_guardian(token: str) -> tuple[int, int] | None:
    if not Path("/proc/self/environ").exists():
        return None  # no /proc: nothing to find our descendants by
    argv = [sys.executable, "-I", "-S", str(GUARDIAN_SCRIPT), GUARD_VAR, token,
            str(GUARD_GRACE), str(_GUARD_POLL)]  # fmt: skip
    if os.access(_WAITING_SHELL, os.X_OK):
        argv = [_WAITING_SHELL, "-c", _WAIT_THEN_GUARD, "hookgate-guardian", *argv]
    told, tell = os.pipe()
    try:
        pid = os.posix_spawn(argv[0], argv, {}, file_actions=_guardian_fds(told), setsid=True)
    except OSError:
        os.close(tell)
        return None  # the children run unguarded, as before
    finally:
        os.close(told)
    atexit.register(_dismiss, pid, tell)
    return pid, tell


def _guardian_fds(stdin: int) -> list[tuple[int | str, ...]]:
    """The guardian's fds: our pipe as stdin, /dev/null as stdout and stderr, and none
    of the inheritable fds we were given (it must hold no pipe of anyone else open)."""
    actions: list[tuple[int | str, ...]] = [
        (os.POSIX_SPAWN_DUP2, stdin, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and os.get_inheritable(fd):
                actions.append((os.POSIX_SPAWN_CLOSE, fd))
        except OSError:  # the listing's own fd is gone already
            pass
    return actions


def _dismiss(pid: int, tell: int) -> None:
    """At a clean exit: our own cleanup ran, so the guardian leaves at once; reap it.

    A daemon that a hook started outside its group on purpose survives a clean exit,
    as it always did; only a hookgate that dies without cleaning up is cleaned after.
    """
    if _guarded_pid != os.getpid():
        return  # a forked child: the guardian is its parent's
    # try, not `contextlib.suppress`, here and where a hook starts: importing contextlib
    # is 2 % of a `hooks fire`.
    try:  # noqa: SIM105
        os.write(tell, b"bye")
    except OSError:
        pass
    try:  # noqa: SIM105
        os.close(tell)
    except OSError:
        pass
    # A Ctrl-C now only cuts the wait short: the guardian was told, and leaves anyway.
    try:
        exited = os.pidfd_open(pid)
        try:
            select.select([exited], [], [], DISMISS_WAIT)
        finally:
            os.close(exited)
    except (OSError, KeyboardInterrupt):
        pass
    try:  # noqa: SIM105
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


#: The children this process started and waits for itself; every other exited child
#: of ours is an adopted orphan, for `reap_orphans`.
_own: set[int] = set()
#: Held from a child's start until it is in `_own` (`starting`): a `reap_orphans` in
#: another thread (the SIGCHLD handler of `hookgate acp`, while a worker thread runs a
#: process) would otherwise take a child that exits at once for an orphan, and reap it.
_starting = _thread.allocate_lock()


def starting() -> _thread.LockType:
    """Hold this while starting a child and `track`ing it."""
    return _starting


def track(pid: int) -> None:
    """`pid` is a child we started and will reap ourselves."""
    _own.add(pid)


def reaped(pid: int) -> None:
    """We reaped `pid`; reap any adopted orphan that has exited meanwhile."""
    _own.discard(pid)
    reap_orphans()


def reap_orphans() -> None:
    """Reap every exited child that we did not start ourselves: adopted orphans.

    One waitid peeks first; our children are listed only when one is a zombie. A child
    started by others in this process (asyncio's, for MCP servers) is a zombie only
    for the instant before its own watcher reaps it.
    """
    try:
        if os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            return
    except ChildProcessError:
        return
    import contextlib  # here: an exited orphan is rare (`hookgate acp` runs this on SIGCHLD)

    guardian = _guardian[0] if _guardian is not None else 0
    with _starting:
        for pid in _children():
            if pid not in _own and pid != guardian and _is_zombie(pid):
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)


def _children() -> set[int]:
    import contextlib  # here: asked for an exited orphan alone (`reap_orphans`)

    children: set[int] = set()
    for listing in Path("/proc/self/task").glob("*/children"):
        with contextlib.suppress(OSError):
            children.update(int(pid) for pid in listing.read_text().split())
    return children


def _is_zombie(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2] == "Z"  # the state, after comm (which may hold spaces)
