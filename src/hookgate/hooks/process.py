"""Start an external process, feed it, read it, bound it, and leave nothing of it behind.

`run_process` is the one function hookgate starts processes with: hooks and the shell
tool alike; `stream_process`, its sibling, hands stdout over as it arrives (an asked
agent's answer). The process runs in a session (and process group) of its own; stdin is
written while stdout and stderr are drained, each capped; the timeout is enforced here,
whatever the process does; at the end the whole group is killed and the leader reaped.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import fcntl
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hookgate.hooks.errors import HookgateError

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
#: Seconds we wait for the exit before draining the pipes on the event loop. Until
#: then output collects in the pipes (`PIPE_SIZE` each); a fast hook is read once,
#: after its exit, which spares two event-loop wake-ups (about 0.2 ms on a VM).
QUIET_START = 0.005
#: Capacity asked of each output pipe (Linux's default limit for unprivileged users).
PIPE_SIZE = 1024 * 1024
_F_SETPIPE_SZ = 1031
#: Signals a child must start with at their default action. Python ignores SIGPIPE and
#: an ignored signal survives exec: a hook piping into `head` would spin otherwise.
_RESET_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)
#: prctl(2) option that makes a process the reaper of its descendants' orphans.
_PR_SET_CHILD_SUBREAPER = 36


#: A process's input: its bytes, or a function that returns them once it has started.
Input = bytes | Callable[[], bytes]


class SpawnError(HookgateError):
    """The program could not be started: not found, not executable, bad directory."""

    def __init__(self, message: str, *, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


@dataclass(frozen=True)
class ProcessResult:
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


async def run_process(
    argv: Sequence[str],
    *,
    stdin: Input = b"",
    env: Mapping[str, str],
    cwd: str | None = None,
    timeout: float,
    output_cap: int = OUTPUT_CAP,
) -> ProcessResult:
    """Run `argv` to completion or to `timeout` seconds, whichever comes first.

    `stdin` is written to the process while its output is read; given as a function,
    it is called once the process has started, so that building the input overlaps
    the process's own start-up. Raises `SpawnError` when the program cannot be
    started; every other outcome is a `ProcessResult`. Cancelling the caller stops the
    process group the same way a timeout does, and the cancellation goes on once the
    leader is reaped.
    """
    started = time.monotonic()
    child = _Child.spawn(argv, env=env, cwd=cwd, output_cap=output_cap)
    timed_out = False
    try:
        child.feed(stdin)
        # Most hooks exit within milliseconds, their output still in the pipe: wait for
        # the exit alone first, so the loop wakes once rather than once per pipe.
        if not await child.wait_exit(min(QUIET_START, timeout)):
            child.drain()
            if not await child.wait_exit(timeout - (time.monotonic() - started)):
                timed_out = True
                await child.stop_group()
        await child.collect_output()
    except BaseException:
        await child.stop_group()
        raise
    finally:
        child.finish()
    return child.result(timed_out=timed_out, started=started)


async def stream_process(
    argv: Sequence[str],
    *,
    on_stdout: Callable[[bytes], None],
    stdin: Input = b"",
    env: Mapping[str, str],
    cwd: str | None = None,
    timeout: float,
    output_cap: int = OUTPUT_CAP,
    kill_grace: float = KILL_GRACE,
) -> ProcessResult:
    """Run `argv` like `run_process`, handing its stdout to `on_stdout` as it arrives.

    Every guarantee of `run_process` holds: own session, capped output, bounded waits,
    the group stopped on timeout or cancellation, the leader reaped. `on_stdout` gets
    each chunk as read, `output_cap` bytes in all, and must not raise; the result's
    `stdout` is therefore empty. `kill_grace` is the time between SIGTERM and SIGKILL:
    a child that stops processes of its own on SIGTERM (another hookgate) needs more
    than a hook does.
    """
    started = time.monotonic()
    child = _Child.spawn(argv, env=env, cwd=cwd, output_cap=output_cap, on_stdout=on_stdout)
    timed_out = False
    try:
        child.feed(stdin)
        child.drain()  # no quiet start: the point is to see the output while it is written
        if not await child.wait_exit(timeout):
            timed_out = True
            await child.stop_group(kill_grace)
        await child.collect_output()
    except BaseException:
        await child.stop_group(kill_grace)
        raise
    finally:
        child.finish()
    return child.result(timed_out=timed_out, started=started)


def resolve_program(program: str, env: Mapping[str, str]) -> str:
    """The path `program` runs as, searched in the child's PATH, like a shell would."""
    if os.sep in program:
        return program
    found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise SpawnError(f"{program!r} not found in PATH", errno=2)
    return found


class _Pipe:
    """The read end of a child's stdout or stderr: read now, or drained by the event loop.

    What is read is kept in `data`, or handed to `sink` (and not kept) when there is one.
    The fd stays open until the child is finished (see `_Child.finish`).
    """

    def __init__(self, fd: int, cap: int, sink: Callable[[bytes], None] | None = None) -> None:
        self.fd = fd
        self.cap = cap
        self.data = bytearray()
        self.size = 0
        self.truncated = False
        self.reading = True
        """False once at end of file, or once the child is finished."""
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sink = sink
        self._watched = False
        os.set_blocking(fd, False)
        with contextlib.suppress(OSError):  # a larger pipe holds a chatty hook's output
            fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_SIZE)

    def watch(self) -> None:
        """Let the event loop drain the pipe from now on."""
        if self.reading and not self._watched:
            self._watched = True
            asyncio.get_running_loop().add_reader(self.fd, self.read_available)

    def read_available(self) -> None:
        """Read what the pipe holds now; stop at end of file."""
        while self.reading:
            try:
                chunk = os.read(self.fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.stop()
                return
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
        if not self.reading:
            return
        self.reading = False
        if self._watched:
            asyncio.get_running_loop().remove_reader(self.fd)
        self.done.set_result(None)


class _Child:
    """A started process group: its pipes, its exit, and the means to stop it."""

    def __init__(
        self,
        pid: int,
        fds: tuple[int, int, int],
        cap: int,
        on_stdout: Callable[[bytes], None] | None = None,
    ) -> None:
        stdin_fd, stdout_fd, stderr_fd = fds
        self.pid = pid  # == the process group id: the child called setsid
        self.returncode = 0
        self.exited = False
        """Whether the leader has exited (it stays unreaped until `finish`)."""
        self._reaped = False
        self._waiter: asyncio.Future[None] | None = None
        self._stdin_fd: int | None = stdin_fd
        self._pending = memoryview(b"")
        self.stdout = _Pipe(stdout_fd, cap, on_stdout)
        self.stderr = _Pipe(stderr_fd, cap)
        self._pidfd = _watch_exit(pid, self._mark_exited)

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        output_cap: int,
        on_stdout: Callable[[bytes], None] | None = None,
    ) -> _Child:
        if not argv:
            raise SpawnError("empty command")
        program = resolve_program(argv[0], env)
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        try:
            pid = _start(program, argv, env, cwd, stdin_r, stdout_w, stderr_w)
        except BaseException:
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            raise
        finally:
            for fd in (stdin_r, stdout_w, stderr_w):
                os.close(fd)
        return cls(pid, (stdin_w, stdout_r, stderr_r), output_cap, on_stdout)

    def feed(self, data: Input) -> None:
        """Write `data` to stdin, then close it; what does not fit now goes in the background."""
        self._pending = memoryview(data() if callable(data) else data)
        if self._stdin_fd is not None:
            # Before the first write: a blocking write of more than the pipe holds would
            # stall the event loop (and the timeout) until the child read it all.
            os.set_blocking(self._stdin_fd, False)
        self._write_some()
        if self._stdin_fd is not None:
            asyncio.get_running_loop().add_writer(self._stdin_fd, self._write_some)

    def _write_some(self) -> None:
        fd = self._stdin_fd
        if fd is None:
            return
        try:
            while self._pending:
                written = os.write(fd, self._pending)
                self._pending = self._pending[written:]
        except BlockingIOError:
            return  # the pipe is full: the loop calls again once the child reads
        except OSError:
            pass  # the child closed its stdin (EPIPE) or is gone: it did not want the rest
        self._close_stdin()

    def _close_stdin(self) -> None:
        fd, self._stdin_fd = self._stdin_fd, None
        if fd is not None:
            asyncio.get_running_loop().remove_writer(fd)
            os.close(fd)

    async def wait_exit(self, seconds: float) -> bool:
        """Wait up to `seconds` for the leader to exit; whether it did."""
        if self.exited:
            return True
        # One future, settled by the exit or by the timer, whichever comes first: the
        # task wakes one loop iteration after the exit (asyncio.wait takes two), and
        # this is the hook runner's hot path.
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()
        timer = loop.call_later(max(seconds, 0), _settle, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None
        return self.exited

    def _mark_exited(self) -> None:
        if self.exited:
            return
        self.exited = True
        if self._waiter is not None:
            _settle(self._waiter)

    def drain(self) -> None:
        """Drain stdout and stderr as they fill: the child may write more than a pipe holds."""
        self.stdout.watch()
        self.stderr.watch()

    async def collect_output(self) -> None:
        """Read what is left; a grandchild holding a pipe gets `EOF_GRACE` seconds."""
        self.stdout.read_available()
        self.stderr.read_available()
        pending = [pipe.done for pipe in (self.stdout, self.stderr) if pipe.reading]
        if not pending:
            return
        self.drain()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(EOF_GRACE):
                await asyncio.shield(asyncio.gather(*pending))

    async def stop_group(self, grace: float = KILL_GRACE) -> None:
        """SIGTERM the group, give it `grace` seconds, then SIGKILL it."""
        if self._reaped:
            return
        self._signal_group(signal.SIGTERM)
        try:
            await self.wait_exit(grace)
        finally:
            # Also on a second cancellation: whatever still runs is killed now.
            self._signal_group(signal.SIGKILL)

    def _signal_group(self, signum: int) -> None:
        # Sent while the leader is unreaped, so the group id cannot have been reused.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signum)

    def result(self, *, timed_out: bool, started: float) -> ProcessResult:
        """What the finished child left, for the caller."""
        return ProcessResult(
            returncode=self.returncode,
            stdout=bytes(self.stdout.data),
            stderr=bytes(self.stderr.data),
            stdout_truncated=self.stdout.truncated,
            stderr_truncated=self.stderr.truncated,
            timed_out=timed_out,
            duration=time.monotonic() - started,
        )

    def finish(self) -> None:
        """Kill whatever is left of the group, reap the leader, release every fd."""
        # The read ends and the pidfd are closed on the next loop iteration, after the
        # caller has its result: the one part of the clean-up it need not wait for.
        loop = asyncio.get_running_loop()
        loop.call_soon(_release, self._pidfd, self.stdout.fd, self.stderr.fd)
        self._pidfd = None
        self.stdout.stop()
        self.stderr.stop()
        self._close_stdin()
        if not self._reaped:
            self._signal_group(signal.SIGKILL)
            _, status = os.waitpid(self.pid, 0)
            self._reaped = True
            self.returncode = os.waitstatus_to_exitcode(status)
            _reap_adopted(self.pid)


def _release(pidfd: int | None, *fds: int) -> None:
    if pidfd is not None:
        asyncio.get_running_loop().remove_reader(pidfd)
        os.close(pidfd)
    for fd in fds:
        os.close(fd)


def _start(
    program: str,
    argv: Sequence[str],
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
    if cwd is None or os.path.abspath(cwd) == os.getcwd():
        actions = [
            (os.POSIX_SPAWN_DUP2, stdin_fd, 0),
            (os.POSIX_SPAWN_DUP2, stdout_fd, 1),
            (os.POSIX_SPAWN_DUP2, stderr_fd, 2),
        ]
        try:
            return os.posix_spawn(
                program, list(argv), dict(env),
                file_actions=actions, setsid=True, setsigdef=_RESET_SIGNALS,
            )  # fmt: skip
        except OSError as exc:
            raise SpawnError(f"cannot run {program!r}: {exc.strerror}", errno=exc.errno) from exc
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


def _watch_exit(pid: int, on_exit: Callable[[], None]) -> int | None:
    """Call `on_exit` on the loop when `pid` exits, leaving it unreaped (a zombie holds
    the group id); the pidfd to close afterwards, if one is used.

    A pidfd tells the event loop directly; where there is none (Linux < 5.3), a thread
    waits with WNOWAIT.
    """
    loop = asyncio.get_running_loop()
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        waiter = loop.run_in_executor(None, _wait_unreaped, pid)
        waiter.add_done_callback(lambda _: on_exit())
        return None
    loop.add_reader(pidfd, on_exit)
    return pidfd


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _wait_unreaped(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)


def _reap_adopted(pgid: int) -> None:
    """Reap the killed members of group `pgid` that were reparented to us.

    They are ours only where `adopt_orphans()` made this process a subreaper; each was
    sent SIGKILL, so each wait is short.
    """
    try:
        while True:
            os.waitpid(-pgid, 0)
    except ChildProcessError:
        pass


def adopt_orphans() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux only).

    A hook's grandchild outlives its parent, is killed with the group, and must then be
    reaped by someone: normally PID 1, but a container's PID 1 often never reaps, and
    every killed grandchild would stay a zombie. Call this once at start-up in a
    program that runs hooks; it returns whether the kernel agreed.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
