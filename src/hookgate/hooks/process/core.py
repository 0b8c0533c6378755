"""What both drivers share: starting the process, its pipes and input, stopping and reaping.

A `Process` does each step without blocking and without an event loop; `aio` and
`blocking` decide when to call which.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from hookgate.hooks.errors import HookgateError
from hookgate.hooks.process import subreaper
from hookgate.hooks.process.guard import guarded, is_guarded, reaped, starting, track
from hookgate.hooks.process.pace import HOLD_WAIT as HOLD_WAIT  # where they were
from hookgate.hooks.process.pace import QUICK as QUICK
from hookgate.hooks.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # the blocking driver runs without asyncio
    import asyncio
    import signal
    from typing import Self
else:
    # signal's C half, the numbers alone: `signal` makes three enums of them at import
    # (3 M instructions, 2 % of a `hooks fire`).
    import _signal as signal

#: Bytes kept of stdout and of stderr each; the rest is read and dropped, so a flood
#: can neither block the process on a full pipe nor fill our memory.
OUTPUT_CAP = 1024 * 1024
#: Seconds between SIGTERM and SIGKILL when a process group is stopped.
KILL_GRACE = 0.5
#: Seconds we wait, once the leader has exited, for its pipes to close. A grandchild
#: still holding them past this is killed with the group: its output is not waited for.
EOF_GRACE = 0.1
#: Bytes read from a pipe per wake-up.
READ_CHUNK = 64 * 1024
#: Seconds we wait for the exit alone before draining the pipes as they fill. Until
#: then output collects in the pipes (64 KiB each, or the `pipe_size` asked for stdout);
#: a fast hook is read once, after its exit, which spares a wake-up per pipe (about
#: 0.1 ms each on a VM). A process that writes more than its pipe holds meanwhile waits
#: for the drain.
QUIET_START = 0.005
#: A pipe's capacity unless asked otherwise (Linux's default).
DEFAULT_PIPE_SIZE = 64 * 1024
#: Capacity `run_process` asks of the stdout pipe by default, for output that is often
#: long (a shell command's): Linux's default limit for unprivileged users. Each resize
#: costs about 9 µs a process, of a spawn's 650 µs: a hook's reply is usually short, and
#: the engine asks for it only for a hook that wrote more than `DEFAULT_PIPE_SIZE`
#: before. stderr keeps the default: a log is rarely longer within `QUIET_START`.
PIPE_SIZE = 1024 * 1024
#: Bytes read from one pipe before control goes back to the caller's loop: one pipe's
#: worth, what it held at the wake-up. The loop calls again while there is more.
READ_BUDGET = PIPE_SIZE
_F_SETPIPE_SZ = 1031
#: Signals a child must start with at their default action. Python ignores SIGPIPE and
#: an ignored signal survives exec: a hook piping into `head` would spin otherwise.
_RESET_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)

#: A process's input: its bytes, or a function that returns them once it has started,
#: whole or as pieces made while they are written (a large event: `formats.pieces`).
Input = bytes | Callable[[], bytes | Iterator[bytes]]


class SpawnError(HookgateError):
    """The program could not be started: not found, not executable, bad directory."""

    def __init__(self, message: str, *, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


class ProcessResult(NamedTuple):
    """What a finished (or stopped) process left: exit status and capped output."""

    returncode: int
    """The exit status; a process killed by a signal has `-signal`, as in subprocess."""
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    timed_out: bool
    duration: float
    """Seconds from start to reaping."""

    @property
    def signal(self) -> int | None:
        """The signal that ended the process, if one did."""
        return -self.returncode if self.returncode < 0 else None


def resolve_program(program: str, env: Mapping[str, str]) -> str:
    """The path `program` runs as, searched in the child's PATH, like a shell would."""
    if os.sep in program:
        return program
    import shutil  # here: a hook named by path (most are: `/bin/sh -c`) needs no search

    found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise SpawnError(f"{program!r} not found in PATH", errno=2)
    return found


def programs_path(path: str, project_dir: str | None = None) -> str:
    """`path` (a `PATH` value) as hooks get it: without its relative entries (`.`, an
    empty one: the working directory, where hooks run), nor, given `project_dir`, that
    folder by any name. An agent's project is its model's to write: a program found
    there by name (`cat`, `git`) would be the model's, run outside any sandbox. A hook's
    own `env:` may say otherwise."""
    project = None
    if project_dir is not None:
        try:  # noqa: SIM105 (not `contextlib.suppress`: its import is 2 % of a `hooks fire`)
            project = os.stat(project_dir)
        except OSError:
            pass
    kept = [
        entry
        for entry in path.split(os.pathsep)
        if os.path.isabs(entry) and not (project and _same_folder(entry, project))
    ]
    return os.pathsep.join(kept)


def _same_folder(path: str, folder: os.stat_result) -> bool:
    try:
        return os.path.samestat(os.stat(path), folder)
    except OSError:
        return False


def enlarge_pipe(fd: int, size: int) -> None:
    """Ask for a pipe (either end's `fd`) of `size` bytes, which holds that much output
    until it is read. Where the kernel refuses (over `/proc/sys/fs/pipe-max-size`, or the
    user's pipe budget, shared by all their processes, is spent), the pipe keeps the
    size it was made with: the documented fallback, slower only for long output."""
    import fcntl  # here: asked for a hook that wrote much before, not by the usual one

    # (`contextlib.suppress` would cost three Python calls on every hook.)
    try:  # noqa: SIM105
        fcntl.fcntl(fd, _F_SETPIPE_SZ, size)
    except OSError:
        pass


class Output:
    """The read end of a child's stdout or stderr, non-blocking.

    What is read is kept in `data`, or handed to `sink` (and not kept) when there is one.
    The fd stays open until the process is finished.
    """

    # What every pipe starts with, set on the instance only once it changes: a hook's
    # run builds two of these, after the start of a process, in a cold cache.
    size = 0
    truncated = False
    reading = True
    """False once at end of file, or once the process is finished."""

    def __init__(self, fd: int, cap: int, sink: Callable[[bytes], None] | None = None) -> None:
        self.fd = fd
        self.cap = cap
        self.data = bytearray()
        self._sink = sink
        os.set_blocking(fd, False)

    def read_available(self) -> None:
        """Read what the pipe holds now, at most `READ_BUDGET` bytes; stop at end of file.

        The bound is what keeps the timeout: a writer as fast as this reader keeps the
        pipe from ever running dry, and an unbounded loop would never hand control back
        to the event loop, or to the poll loop that checks the deadline.
        """
        budget = READ_BUDGET
        while self.reading and budget > 0:
            try:
                chunk = os.read(self.fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.stop()
                return
            budget -= len(chunk)
            room = self.cap - self.size
            if len(chunk) > room:
                self.truncated = True
                chunk = chunk[: max(room, 0)]
            self.size += len(chunk)
            if self._sink is None:
                self.data += chunk
            elif chunk:
                self._sink(chunk)

    def stop(self) -> None:
        """Read no more."""
        self.reading = False


class Process:
    """A started process group: its input, its two outputs, its exit, and its end.

    `pidfd` (None on Linux < 5.3) becomes readable when the leader exits, which leaves
    it unreaped: a zombie keeps the group id ours until `reap`.
    """

    output_type: type[Output] = Output
    # The state of a process just started, set on the instance as it changes (as in
    # `Output`: fewer stores on every hook's run).
    returncode = 0
    exited = False
    """Whether the leader has exited (it stays unreaped until `reap`)."""
    reaped = False
    _pending = memoryview(b"")  # of the input, made and not yet written
    _pieces: Iterator[bytes] | None = None  # of the input, not yet made

    def __init__(
        self,
        pid: int,
        pidfd: int | None,
        fds: tuple[int, int, int],
        cap: int,
        on_stdout: Callable[[bytes], None] | None = None,
    ) -> None:
        self.pid = pid  # == the process group id: the child called setsid
        self.stdin_fd: int | None = fds[0]
        self.stdout = self.output_type(fds[1], cap, on_stdout)
        self.stderr = self.output_type(fds[2], cap)
        self.pidfd = pidfd

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        output_cap: int,
        on_stdout: Callable[[bytes], None] | None = None,
        pipe_size: int | None = None,
    ) -> Self:
        """Start `argv` in a session of its own on three fresh pipes; `pipe_size` is the
        capacity asked of the stdout pipe (None: the default)."""
        if not argv:
            raise SpawnError("empty command")
        program = resolve_program(argv[0], env)
        if not is_guarded(env):  # a caller that runs it again keeps a marked copy
            env = guarded(env)  # the guardian stops it, and all it starts, if we die
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        ours = (stdin_w, stdout_r, stderr_r)
        if pipe_size is not None:  # before the start: a quick writer must find it so
            enlarge_pipe(stdout_r, pipe_size)
        pid: int | None = None
        pidfd: int | None = None
        # From the start on, an interrupt (Ctrl-C) at any step kills the child. Once this
        # returns, the caller's `try` stops it: CPython handles signals at calls and
        # loops, not between a Python function's return and the caller's next call.
        try:
            try:
                with starting():  # tracked before any other thread may take it for an orphan
                    # (`tuple` copies nothing where `argv` is one already: a hook's is)
                    pid = _start(program, tuple(argv), env, cwd, stdin_r, stdout_w, stderr_w)
                    track(pid)
            finally:
                for fd in (stdin_r, stdout_w, stderr_w):
                    os.close(fd)
            pidfd = _open_pidfd(pid)
            return cls(pid, pidfd, ours, output_cap, on_stdout)
        except BaseException as exc:
            if pid is None and not isinstance(exc, SpawnError):
                pid = _child_on_pipes(ours)  # started, but the interrupt lost its pid
            if pid is not None:
                _kill_unwatched(pid)
            for end in (*ours, pidfd):
                if end is not None:
                    os.close(end)
            raise

    def start_input(self, data: Input) -> None:
        """Take the input and write what the pipe takes now; `write_input` does the rest."""
        made = data() if callable(data) else data
        fd = self.stdin_fd
        if type(made) is bytes and len(made) <= select.PIPE_BUF and fd is not None:
            # The usual event: it fits a fresh pipe whole, written at once, stdin closed.
            try:  # noqa: SIM105 (not `contextlib.suppress`: this runs for every hook)
                os.write(fd, made)
            except OSError:
                pass  # the child closed its stdin (EPIPE): it did not want it
            self.close_input()
            return
        if not isinstance(made, bytes | bytearray | memoryview):  # pieces, made as written
            self._pieces = made
            made = next(made, b"")
        self._pending = memoryview(made)
        if self.stdin_fd is not None and (
            self._pieces is not None or len(self._pending) > select.PIPE_BUF
        ):
            # Before the first write: a blocking write of more than the pipe holds would
            # stall us (and the timeout) until the child read it all. Up to `PIPE_BUF`
            # bytes, the usual event, fit a fresh pipe whole, at once.
            os.set_blocking(self.stdin_fd, False)
        self.write_input()

    def write_input(self) -> None:
        """Write what the pipe takes now; close stdin once all is written or refused."""
        fd = self.stdin_fd
        if fd is None:
            return
        try:
            while self._pending:
                written = os.write(fd, self._pending)
                self._pending = self._pending[written:]
                if not self._pending and self._pieces is not None:
                    self._pending = memoryview(next(self._pieces, b""))
        except BlockingIOError:
            return  # the pipe is full: call again once the child reads
        except OSError:
            pass  # the child closed its stdin (EPIPE) or is gone: it did not want the rest
        self.close_input()

    def close_input(self) -> None:
        self._pieces = None  # what is not made yet never is
        fd, self.stdin_fd = self.stdin_fd, None
        if fd is not None:
            os.close(fd)

    def read_outputs(self) -> None:
        """Read what both pipes hold now."""
        self.stdout.read_available()
        self.stderr.read_available()

    def signal_group(self, signum: int) -> None:
        # Sent while the leader is unreaped, so the group id cannot have been reused.
        try:  # noqa: SIM105 (not `contextlib.suppress`: this runs for every hook)
            os.killpg(self.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    def reap(self) -> None:
        """Stop reading and writing, kill whatever is left of the group, reap the leader."""
        if self.stdout.reading:  # else stopped at end of file: the usual hook
            self.stdout.stop()
        if self.stderr.reading:
            self.stderr.stop()
        if self.stdin_fd is not None:
            self.close_input()
        if not self.reaped:
            self.signal_group(signal.SIGKILL)
            _, status = os.waitpid(self.pid, 0)
            self.reaped = True
            self.returncode = os.waitstatus_to_exitcode(status)
            if subreaper.adopting:  # a killed member may have been reparented to us
                subreaper.reap_group(self.pid)
            reaped(self.pid)

    def release(self) -> None:
        """Close the fds left open: the pidfd and the read ends."""
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        for fd in (self.stdout.fd, self.stderr.fd):
            os.close(fd)

    def result(self, *, timed_out: bool, started: float) -> ProcessResult:
        """What the finished process left, for the caller."""
        return ProcessResult(
            returncode=self.returncode,
            stdout=bytes(self.stdout.data),
            stderr=bytes(self.stderr.data),
            stdout_truncated=self.stdout.truncated,
            stderr_truncated=self.stderr.truncated,
            timed_out=timed_out,
            duration=time.monotonic() - started,
        )


def _start(
    program: str,
    argv: tuple[str, ...],
    env: Mapping[str, str],
    cwd: str | None,
    stdin_fd: int,
    stdout_fd: int,
    stderr_fd: int,
) -> int:
    """Start the child in a new session with the three pipe ends as fds 0, 1 and 2.

    `posix_spawn` is the fast path; it cannot change directory, so a hook with a
    `cwd` other than ours starts through `subprocess.Popen`, which can.
    """
    if cwd is None or cwd == (here := os.getcwd()) or os.path.abspath(cwd) == here:
        actions = [
            (os.POSIX_SPAWN_DUP2, stdin_fd, 0),
            (os.POSIX_SPAWN_DUP2, stdout_fd, 1),
            (os.POSIX_SPAWN_DUP2, stderr_fd, 2),
        ]
        try:
            return os.posix_spawn(
                program, argv, env,
                file_actions=actions, setsid=True, setsigdef=_RESET_SIGNALS,
            )  # fmt: skip
        except OSError as exc:
            raise SpawnError(f"cannot run {program!r}: {exc.strerror}", errno=exc.errno) from exc
    import subprocess  # here: most hooks start in our directory, through posix_spawn

    try:
        popen = subprocess.Popen(
            [program, *argv[1:]], executable=program, stdin=stdin_fd, stdout=stdout_fd,
            stderr=stderr_fd, cwd=cwd, env=dict(env), start_new_session=True,
        )  # fmt: skip
    except OSError as exc:
        raise SpawnError(
            f"cannot run {program!r} in {cwd!r}: {exc.strerror}", errno=exc.errno
        ) from exc
    popen.returncode = 0  # we reap it ourselves; keep Popen from trying (and warning)
    return popen.pid


def _kill_unwatched(pid: int) -> None:
    """Kill and reap the group of a child whose start was interrupted."""
    import contextlib  # here: a start interrupted is rare

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    reaped(pid)


def _child_on_pipes(fds: tuple[int, ...]) -> int | None:
    """Our child whose stdin, stdout or stderr is one of the pipes of `fds` (the ends we
    kept): how a start is found whose pid an interrupt lost. Linux (/proc) only."""
    import contextlib  # here: an interrupted start alone looks

    pipes = {f"pipe:[{os.fstat(fd).st_ino}]" for fd in fds}
    for listing in Path("/proc/self/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for pid in listing.read_text().split():
                for fd in range(3):
                    with contextlib.suppress(OSError):
                        if os.readlink(f"/proc/{pid}/fd/{fd}") in pipes:
                            return int(pid)
    return None


def _open_pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # Linux < 5.3
        return None


def watch_exit(
    loop: asyncio.AbstractEventLoop, pid: int, pidfd: int | None, on_exit: Callable[[], None]
) -> None:
    """Call `on_exit` on `loop` once `pid` has exited: its pidfd watched, or without one
    (Linux < 5.3) a thread waiting for the exit."""
    if pidfd is not None:
        loop.add_reader(pidfd, on_exit)
    else:
        waiter = loop.run_in_executor(None, lambda: exited_unreaped(pid, block=True))
        waiter.add_done_callback(lambda _: on_exit())


def exited_unreaped(pid: int, *, block: bool) -> bool:
    """Whether `pid` has exited, leaving it unreaped; `block` waits for it."""
    flags = os.WEXITED | os.WNOWAIT | (0 if block else os.WNOHANG)
    try:
        return os.waitid(os.P_PID, pid, flags) is not None
    except ChildProcessError:
        return True  # already reaped: it has exited
