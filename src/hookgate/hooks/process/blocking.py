"""The blocking driver: `run_process_sync`, for a caller without an event loop.

It gives every guarantee of `run_process` and waits in poll(2) on the process's pidfd
and pipes. With no event loop between the exit and the caller, it is also the cheaper
of the two (docs/benchmarks.md).
"""

from __future__ import annotations

import select
import time
from collections.abc import Callable, Mapping, Sequence

from hookgate.hooks.process.core import (
    EOF_GRACE,
    KILL_GRACE,
    OUTPUT_CAP,
    PIPE_SIZE,
    QUIET_START,
    Input,
    Output,
    Process,
    ProcessResult,
    exited_unreaped,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
else:
    # signal's C half, the numbers alone: `signal` makes three enums of them at import
    # (3 M instructions, 2 % of a `hooks fire`).
    import _signal as signal

#: Seconds between exit checks where there is no pidfd to wait on (Linux < 5.3).
_NO_PIDFD_TICK = 0.001


def run_process_sync(
    argv: Sequence[str],
    *,
    stdin: Input = b"",
    env: Mapping[str, str],
    cwd: str | None = None,
    timeout: float,
    output_cap: int = OUTPUT_CAP,
    pipe_size: int | None = PIPE_SIZE,
) -> ProcessResult:
    """`run_process` for synchronous callers: it blocks the calling thread meanwhile.

    The same process handling: own session, input written while both outputs are
    drained and capped, the timeout enforced whatever the process does, the group
    stopped (SIGTERM, `KILL_GRACE`, SIGKILL) and the leader reaped. An exception that
    interrupts the wait (KeyboardInterrupt) stops the group the same way, then goes on.
    `pipe_size` as in `run_process`.
    """
    started = time.monotonic()
    deadline = started + timeout
    process = Process.spawn(argv, env=env, cwd=cwd, output_cap=output_cap, pipe_size=pipe_size)
    timed_out = False
    try:
        process.start_input(stdin)
        # As in run_process: a fast hook is read once, after its exit.
        quiet_until = min(deadline, started + QUIET_START)
        if _exited_quietly(process, quiet_until):  # the usual hook: one poll(2), one read each
            process.read_outputs()
            if process.stdout.reading or process.stderr.reading:
                _Poller(process).collect_output()
        else:
            poller = _Poller(process)
            if not poller.wait_exit(quiet_until):
                poller.drain()
                if not poller.wait_exit(deadline):
                    timed_out = True
                    poller.stop_group()
            poller.collect_output()
    except BaseException:
        _Poller(process).stop_group()
        raise
    finally:
        process.reap()
        process.release()
    return process.result(timed_out=timed_out, started=started)


def _exited_quietly(process: Process, until: float) -> bool:
    """Whether the leader exited by `until`, waited for on its pidfd alone: only where
    the input is all written (else the process may be waiting for the rest of it)."""
    if process.stdin_fd is not None or process.pidfd is None:
        return False
    remaining = until - time.monotonic()
    if remaining <= 0:
        return False
    exit_poll = select.poll()
    exit_poll.register(process.pidfd, select.POLLIN)
    process.exited = bool(exit_poll.poll(remaining * 1000))  # poll(2) rounds it up
    return process.exited


class _Poller:
    """Waits on one process's pidfd, input and outputs, and handles what becomes ready."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self._poll = select.poll()
        self._handlers: dict[int, Callable[[], None]] = {}
        if process.pidfd is not None:
            self._watch(process.pidfd, select.POLLIN, self._exited)
        if process.stdin_fd is not None:
            self._watch(process.stdin_fd, select.POLLOUT, self._write)

    def wait_exit(self, deadline: float) -> bool:
        """Handle events until the leader exits or `deadline`; whether it exited."""
        return self._until(lambda: self.process.exited, deadline)

    def drain(self) -> None:
        """Read both outputs as they fill from now on."""
        for output in (self.process.stdout, self.process.stderr):
            if output.reading and output.fd not in self._handlers:
                self._watch(output.fd, select.POLLIN, self._reader(output))

    def collect_output(self) -> None:
        """Read what is left; a grandchild holding a pipe gets `EOF_GRACE` seconds."""
        process = self.process

        def at_eof() -> bool:
            return not (process.stdout.reading or process.stderr.reading)

        process.read_outputs()
        if not at_eof():
            self.drain()
            self._until(at_eof, time.monotonic() + EOF_GRACE)

    def stop_group(self) -> None:
        """SIGTERM the group, give it `KILL_GRACE` seconds, then SIGKILL it."""
        process = self.process
        if process.reaped:
            return
        process.signal_group(signal.SIGTERM)
        try:
            self.wait_exit(time.monotonic() + KILL_GRACE)
        finally:
            process.signal_group(signal.SIGKILL)

    def _until(self, done: Callable[[], bool], deadline: float) -> bool:
        process = self.process
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if process.pidfd is None:
                if exited_unreaped(process.pid, block=False):
                    process.exited = True
                    continue
                remaining = min(remaining, _NO_PIDFD_TICK)
            for fd, _ in self._poll.poll(remaining * 1000):  # rounded up, as above
                handler = self._handlers.get(fd)
                if handler is not None:
                    handler()
        return True

    def _watch(self, fd: int, events: int, handler: Callable[[], None]) -> None:
        self._handlers[fd] = handler
        self._poll.register(fd, events)

    def _forget(self, fd: int) -> None:
        del self._handlers[fd]
        self._poll.unregister(fd)

    def _exited(self) -> None:
        self.process.exited = True
        assert self.process.pidfd is not None
        self._forget(self.process.pidfd)

    def _write(self) -> None:
        fd = self.process.stdin_fd
        self.process.write_input()
        if fd is not None and self.process.stdin_fd is None:  # all written, and closed
            self._forget(fd)

    def _reader(self, output: Output) -> Callable[[], None]:
        def read() -> None:
            output.read_available()
            if not output.reading:
                self._forget(output.fd)

        return read
