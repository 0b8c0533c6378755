"""Run a command as the reaper of all it starts; when it ends, end everything it left.

The shell tool runs `python -I -S reaper.py [--scoped] NPROC CPU FSIZE -- bash -c
COMMAND`. In the sandbox (`--scoped`) this process first takes itself, and all it will
start, into a Landlock domain of its own (`tools/sandbox/landlock.py`, loaded by path
too): no abstract Unix socket outside the sandbox is reached, network or not. This
process makes itself a subreaper with the hook runner's own `adopt_orphans` (loaded
from `hooks/process/subreaper.py` by path): an orphan of the command (a `setsid`
daemon, a double fork) is reparented here, not to hookgate or PID 1. Once the command exits, or SIGTERM comes (a timeout, a cancelled
turn), every descendant is killed and reaped; then this exits as the command did.
The limits (a number or `-`) are set with setrlimit(2) before the command starts.
Standard library only, and nothing of hookgate: it starts in milliseconds.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import resource
import signal
import sys
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs a bare interpreter milliseconds
    from typing import Any

#: The file of `adopt_orphans`, which imports nothing of hookgate.
_SUBREAPER = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hooks", "process", "subreaper.py"
)
#: The file of `scope_self`, which imports nothing of hookgate either.
_LANDLOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox", "landlock.py")
#: The exit status of a command that could not be started, as a shell reports it.
_CANNOT_RUN = 127
#: Signals that end the command early: run_process sends SIGTERM to the group.
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
#: Signals Python ignores at start-up; an ignored signal survives exec, so the command
#: gets them back at their default (a `yes | head` would spin otherwise).
_RESET_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)


class _Stopped(Exception):
    """A stop signal came while the command ran."""


def main(argv: Sequence[str]) -> int:
    scoped = argv[:1] == ["--scoped"]
    nproc, cpu, fsize, separator, *command = argv[scoped:]
    if separator != "--" or not command:
        print("usage: reaper.py [--scoped] NPROC CPU FSIZE -- COMMAND...", file=sys.stderr)
        return 2
    if scoped:
        _load(_LANDLOCK).scope_self()  # where the kernel cannot, `hooks check` says so
    _load(_SUBREAPER).adopt_orphans()
    _set_limits(nproc, cpu, fsize)
    for signum in _STOP_SIGNALS:
        signal.signal(signum, _stop)
    # Blocked across the fork: a stop signal must reach neither a child that has not
    # reset its handlers yet nor us before we know the child's pid.
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        pid = os.fork()
    except OSError as exc:  # EAGAIN: the process limit is reached already
        print(f"cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return _CANNOT_RUN
    if pid == 0:
        _exec(command)
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        status: int | None = _wait_for(pid)
    except _Stopped:
        status = None
    for signum in _STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    _end_descendants()
    if status is None:
        return 128 + signal.SIGTERM
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # die of the command's signal, so the caller reads the same status
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def _load(path: str) -> Any:
    """The module at `path`, without importing hookgate (150 ms): the hook runner's
    `adopt_orphans`, the sandbox's `scope_self`."""
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stop(signum: int, frame: object) -> None:
    raise _Stopped


def _set_limits(nproc: str, cpu: str, fsize: str) -> None:
    if nproc != "-":  # RLIMIT_NPROC counts all the user's processes: add to those
        limit = _user_processes() + int(nproc)
        resource.setrlimit(resource.RLIMIT_NPROC, _both(limit, resource.RLIMIT_NPROC))
    if cpu != "-":
        resource.setrlimit(resource.RLIMIT_CPU, _both(int(cpu), resource.RLIMIT_CPU))
    if fsize != "-":
        resource.setrlimit(resource.RLIMIT_FSIZE, _both(int(fsize), resource.RLIMIT_FSIZE))


def _both(value: int, kind: int) -> tuple[int, int]:
    """Soft and hard limit `value`, never above the hard limit already in force."""
    _, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    return value, value


def _user_processes() -> int:
    uid = os.getuid()
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                count += os.stat(f"/proc/{name}").st_uid == uid
    return count


def _exec(command: list[str]) -> None:
    for signum in (*_STOP_SIGNALS, *_RESET_SIGNALS):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
    os._exit(_CANNOT_RUN)


def _wait_for(pid: int) -> int:
    """The wait status of `pid`; adopted orphans that exit meanwhile are reaped too."""
    while True:
        reaped, status = os.waitpid(-1, 0)
        if reaped == pid:
            return status


def _end_descendants() -> None:
    """Kill every descendant left and reap it, until none is left.

    Each round kills this process's children; an orphan of one of them is reparented
    here as it dies, and the next round finds it. No child left means no descendant.
    """
    me = os.getpid()
    while True:
        for child in _children(me):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as file:
            return [int(child) for child in file.read().split()]
    except OSError:  # a kernel without CONFIG_PROC_CHILDREN: look at every process
        return [other for other in _all_pids() if _parent(other) == pid]


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as file:
            text = file.read()
    except OSError:
        return None
    return int(text[text.rindex(")") + 2 :].split()[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
