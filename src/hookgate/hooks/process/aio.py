"""The event-loop driver: `run_process` and `stream_process` on asyncio."""

from __future__ import annotations

import asyncio
import contextlib
import math
import select
import signal
import time
from collections.abc import Callable, Mapping, Sequence

from hookgate.hooks.loop import needs_loop
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
    watch_exit,
)
from hookgate.hooks.process.wakeup import Wakeup


async def run_process(
    argv: Sequence[str],
    *,
    stdin: Input = b"",
    env: Mapping[str, str],
    cwd: str | None = None,
    timeout: float,
    output_cap: int = OUTPUT_CAP,
    hold: float = 0.0,
    pipe_size: int | None = PIPE_SIZE,
) -> ProcessResult:
    """Run `argv` to completion or to `timeout` seconds, whichever comes first.

    `stdin` is written to the process while its output is read; given as a function,
    it is called once the process has started, so that building the input overlaps
    the process's own start-up. `hold` is how long to wait for the exit first with the
    event loop held (poll(2)), for a process known to be quick (`QUICK`, `HOLD_WAIT`):
    the loop then neither watches nor wakes for it. `pipe_size` is the capacity asked of
    the stdout pipe, which holds that much output until the exit is seen (`QUIET_START`);
    None keeps the default 64 KiB, and saves the system call. Raises `SpawnError` when the
    program cannot be started; every other outcome is a `ProcessResult`. Cancelling
    the caller stops the process group the same way a timeout does, and the
    cancellation goes on once the leader is reaped.
    """
    await needs_loop()  # waited for on the loop: a coroutine stepped without one moves there
    started = time.monotonic()
    child = _Child.spawn(argv, env=env, cwd=cwd, output_cap=output_cap, pipe_size=pipe_size)
    timed_out = False
    try:
        child.feed(stdin)
        # Most hooks exit within milliseconds, their output still in the pipe: wait for
        # the exit alone first, so the loop wakes once rather than once per pipe.
        held = child.hold_exit(min(hold, timeout))
        if not (held or await child.wait_exit(min(QUIET_START, timeout))):
            child.drain()
            if not await child.wait_exit(timeout - (time.monotonic() - started)):
                timed_out = True
                await child.stop_group()
        child.read_outputs()
        if child.stdout.reading or child.stderr.reading:  # else both at end of file
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
    await needs_loop()
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


class _LoopOutput(Output):
    """An output the event loop can drain, and wait on to its end of file."""

    _watched_by: asyncio.AbstractEventLoop | None = None
    _eof: asyncio.Future[None] | None = None  # made only when waited on

    def watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Let `loop` drain the pipe from now on."""
        if self.reading and self._watched_by is None:
            self._watched_by = loop
            loop.add_reader(self.fd, self.read_available)

    def stop(self) -> None:
        if not self.reading:
            return
        self.reading = False
        if self._watched_by is not None:
            self._watched_by.remove_reader(self.fd)
        if self._eof is not None:
            self._eof.set_result(None)

    def eof(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future done at end of file, or once reading stops; made only when waited on
        (a hook's pipes are usually at end of file by the time it has exited)."""
        if self._eof is None:
            self._eof = loop.create_future()
            if not self.reading:
                self._eof.set_result(None)
        return self._eof


class _Child(Process):
    """A `Process` on the event loop: its exit, input and outputs watched by the loop."""

    output_type = _LoopOutput
    stdout: _LoopOutput
    stderr: _LoopOutput

    _loop: asyncio.AbstractEventLoop | None = None
    _waiter: Wakeup | None = None
    _writer: int | None = None  # stdin, while the loop writes what is left
    _exit_watched = False  # by the loop: from the first `wait_exit` on

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, looked up once it is needed (each look-up is a getpid(2)):
        a quick process, its input written at once and its exit held for, needs none."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def feed(self, data: Input) -> None:
        """Write `data` to stdin, then close it; what does not fit now goes in the background."""
        self.start_input(data)
        if self.stdin_fd is not None:
            self.loop.add_writer(self.stdin_fd, self.write_input)
            self._writer = self.stdin_fd

    def close_input(self) -> None:
        if self._writer is not None:  # most events fit the pipe: no writer was added
            self.loop.remove_writer(self._writer)
            self._writer = None
        super().close_input()

    def hold_exit(self, seconds: float) -> bool:
        """Wait up to `seconds` for the leader to exit with the loop held; whether it
        did. Not while the loop has input left to write, which the process may wait for."""
        if seconds <= 0 or self.pidfd is None or self._writer is not None:
            return False
        exit_poll = select.poll()
        exit_poll.register(self.pidfd, select.POLLIN)
        if exit_poll.poll(math.ceil(seconds * 1000)):
            self.exited = True
        return self.exited

    async def wait_exit(self, seconds: float) -> bool:
        """Wait up to `seconds` for the leader to exit; whether it did."""
        if self.exited:
            return True
        loop = self.loop
        if not self._exit_watched:
            self._exit_watched = True
            watch_exit(loop, self.pid, self.pidfd, self._mark_exited)
        # One wake-up, by the exit or by the timer, whichever comes first: the task
        # resumes in the pidfd's callback itself, where a future would resume it a loop
        # pass later (asyncio.wait two). This is the hook runner's hot path.
        self._waiter = waiter = Wakeup(loop)
        timer = loop.call_later(max(seconds, 0), waiter.wake)
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
            self._waiter.wake()

    def drain(self) -> None:
        """Drain stdout and stderr as they fill: the child may write more than a pipe holds."""
        self.stdout.watch(self.loop)
        self.stderr.watch(self.loop)

    async def collect_output(self) -> None:
        """Read what is left; a grandchild holding a pipe gets `EOF_GRACE` seconds."""
        self.read_outputs()
        if not (self.stdout.reading or self.stderr.reading):
            return
        pending = [pipe.eof(self.loop) for pipe in (self.stdout, self.stderr) if pipe.reading]
        self.drain()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(EOF_GRACE):
                await asyncio.shield(asyncio.gather(*pending))

    async def stop_group(self, grace: float = KILL_GRACE) -> None:
        """SIGTERM the group, give it `grace` seconds, then SIGKILL it."""
        if self.reaped:
            return
        self.signal_group(signal.SIGTERM)
        try:
            await self.wait_exit(grace)
        finally:
            # Also on a second cancellation: whatever still runs is killed now.
            self.signal_group(signal.SIGKILL)

    def finish(self) -> None:
        """Kill whatever is left of the group, reap the leader, release every fd."""
        try:
            self.reap()
        finally:
            if self._exit_watched:
                # The pidfd's reader is removed and the fds closed on the next loop
                # iteration, after the caller has its result: the one part of the
                # clean-up it need not wait for.
                self.loop.call_soon(self.release)
            else:
                self.release()  # three closes: less than scheduling them

    def release(self) -> None:
        if self.pidfd is not None and self._exit_watched:
            self.loop.remove_reader(self.pidfd)
        super().release()
