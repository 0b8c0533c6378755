"""A resident process: started once, then asked one line at a time (persistent hooks).

It is started like every other process (`core.Process`: own session, guarded
environment, explicit env) and kept: each `ask` writes one line to its stdin and
waits for one line on its stdout, bounded by the caller's deadline (the pipes, and
the `ResidentFailure` a broken reply is: `lines.Pipes`); the deadline passing is
`TimeoutError`. After either, the caller stops it (`stop`): stdin closed,
`STOP_GRACE`, SIGTERM to the group, `KILL_GRACE`, SIGKILL, the leader reaped, every fd
closed. stderr is drained whenever a reply is waited for (a process that fills it
stops replying: it is waited for). Where the process shares our processor, its reply
is usually there as soon as the line is written (its wake-up preempted us): both
drivers read it at once, without a poll (once more after offering our processor, to a
process that shares it and has not run yet); a look that finds nothing backs off.
Otherwise `ask_sync` waits in poll(2);
`ask` lets the event loop wake it (its reader resumes the task at once:
`wakeup.Wakeup`), its fds watched by that loop until another one (or `ask_sync`)
asks. While the hook's is quick (`pace`: a reply within `QUICK` lately), `ask` waits
for the next in poll(2) first, the loop held (`HOLD_WAIT` at most): a pass of the loop
costs about as much as such an exchange. A hook that turns slow holds the loop once,
then is waited for on the loop until it is quick again.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Self

from hookgate.hooks.kinds.persistent.lines import LINE_CAP, Pipes
from hookgate.hooks.process.core import (
    HOLD_WAIT,
    KILL_GRACE,
    QUICK,
    READ_CHUNK,
    Process,
    watch_exit,
)
from hookgate.hooks.process.pace import SLOW_RUNS, runs_since_quick

if TYPE_CHECKING:  # imported by `ask` alone: `ask_sync` needs no event loop
    import asyncio

    from hookgate.hooks.process.wakeup import Wakeup

#: Seconds a resident process has to exit by itself once its stdin is closed.
STOP_GRACE = 0.2
#: Seconds between exit checks where there is no pidfd to wait on (Linux < 5.3).
_NO_PIDFD_TICK = 0.001
#: Seconds an answer not there at once is looked for again before we sleep in
#: poll(2) (`Resident._one_read`): none, past one more look after our processor is
#: offered. Looking for 0.1 ms paid where the process ran warm on another processor
#: (its answer in about 20 µs, where a sleep costs 40 µs more to wake from on a virtual
#: machine), and cost more wherever else: on a busy machine a processor we spin on is
#: one the answering process cannot move to, and each offer of it may go to other work
#: for a time slice. Called event by event (as a session calls its hooks), at load 1.4
#: to 1.9 on two cores, an event took 1.36-1.53x the bare exchange with the looking,
#: 1.06-1.23x without, in runs interleaved (`bench/issue34.py`, call by call: up to
#: 1.47x with it, 1.24x without). Each miss in a row doubles the events that skip even
#: the first look.
LOOK_AGAIN = 0.0
#: The most events in a row that skip the early read (`Resident._one_read`).
_EARLY_SKIPS_MAX = 63


class Resident(Pipes):
    """A started resident process, asked by either driver, one line at a time."""

    def __init__(self, process: Process) -> None:
        super().__init__(process)
        self._stdout_watched = False  # by `_loop`'s reader (`_watch_stdout`)
        self._waiter: Wakeup | None = None
        self._wakeup: type[Wakeup] | None = None
        self._alarm: asyncio.TimerHandle | None = None
        self._alarm_at = math.inf
        self._slow_runs = SLOW_RUNS  # replies since one within `QUICK` (`pace`)
        self._early_backoff = 0  # events that skip the early read after a miss (`_one_read`)
        self._early_skips = 0  # of which are left

    @classmethod
    def start(cls, argv: Sequence[str], *, env: Mapping[str, str], cwd: str | None) -> Self:
        """Start `argv`; raises `SpawnError` when it cannot be."""
        return cls(Process.spawn(argv, env=env, cwd=cwd, output_cap=LINE_CAP))

    # Without an event loop.

    def ask_sync(self, line: bytes | Iterator[bytes], deadline: float) -> bytes:
        """Write `line` (whole, or in pieces made as they are written), wait for one line
        back until `deadline` (monotonic seconds)."""
        if self._loop is not None:
            self._detach()
        wait = deadline - time.monotonic()  # before the write: after it, the exchange alone
        pending = self._send(line)
        if not pending and not self._buffer and (reply := self._one_read(wait)) is not None:
            return reply
        while True:
            # Once it has exited, what is left of the line will never be read: the reply
            # tells how it ended (`ResidentGone` if it read none of it).
            if (not pending or self.process.exited) and (reply := self._reply()) is not None:
                return reply
            self._wait_sync(deadline, write=bool(pending))
            self._read_stdout()
            if pending:
                pending = self._write(pending)

    def _one_read(self, wait: float) -> bytes | None:
        """The usual exchange, in one read, or one poll and one read: the reply, when
        stdout alone had or woke us with one whole line within `wait` seconds (counted
        from before the line was written); None leaves the rest to the caller's wait
        (what was read is kept, and what else woke the poll wakes it too)."""
        fd = self.process.stdout.fd
        if wait <= 0 or self.process.pidfd is None:
            return None
        if self._early_skips:
            self._early_skips -= 1
            chunk = None
        else:
            # A process on our processor usually runs as soon as it is written to (its
            # wake-up preempts us), and its reply is there before we look: read it
            # without the poll (`LOOK_AGAIN`). One elsewhere is still working: the
            # poll waits for it. Each miss in a row doubles the events that go
            # straight to the poll (`_EARLY_SKIPS_MAX`).
            try:
                chunk = _read_soon(fd, wait if wait < LOOK_AGAIN else LOOK_AGAIN)
            except OSError:  # an error `_read_stdout` reads as end of file
                return None
            if chunk is None:
                self._early_backoff = min(self._early_backoff * 2 + 1, _EARLY_SKIPS_MAX)
                self._early_skips = self._early_backoff
            else:
                self._early_backoff = 0
        if chunk is None:
            ready = self._poll.poll(math.ceil(wait * 1000))
            if len(ready) != 1 or ready[0][0] != fd:
                return None
            try:
                chunk = os.read(fd, READ_CHUNK)
            except OSError:  # EAGAIN, or an error `_read_stdout` reads as end of file
                return None
        line, end, rest = chunk.partition(b"\n")
        if end and not rest:  # one whole line: the reply
            return line
        self._buffer += chunk
        self._stdout_eof = not chunk
        return None

    def _wait_sync(self, deadline: float, *, write: bool = False) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        process = self.process
        if process.pidfd is None:
            remaining = min(remaining, _NO_PIDFD_TICK)
        stdin = process.stdin_fd if write else None
        if stdin is not None:
            self._poll.register(stdin, select.POLLOUT)
        try:
            ready = {fd for fd, _ in self._poll.poll(math.ceil(remaining * 1000))}
        finally:
            if stdin is not None:
                self._poll.unregister(stdin)
        if process.stderr.fd in ready:
            self._read_stderr()
        if process.pidfd in ready or process.pidfd is None:
            self.has_exited()

    def stop_sync(self) -> None:
        """End it: stdin closed, then SIGTERM, then SIGKILL, each after its grace."""
        if self.stopped:
            return
        self._detach()
        process = self.process
        try:
            process.close_input()
            for grace, then in ((STOP_GRACE, signal.SIGTERM), (KILL_GRACE, signal.SIGKILL)):
                deadline = time.monotonic() + grace
                with contextlib.suppress(TimeoutError):
                    while not process.exited:
                        self._wait_sync(deadline)
                        self._buffer.clear()
                        self._read_stdout()  # what it still writes is dropped
                if process.exited:
                    break
                process.signal_group(then)
        finally:
            self._finish()

    def kill(self) -> None:
        """End it at once (the caller is interrupted): SIGKILL to the group, reaped."""
        if not self.stopped:
            self._detach()
            self._finish()

    # On an event loop.

    async def ask(
        self,
        line: bytes | Iterator[bytes],
        deadline: float,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> bytes:
        """`ask_sync` on the running event loop (`loop`, where the caller has it at hand:
        each look-up is a getpid(2)), which serves others meanwhile."""
        loop = loop or running_loop()
        if self._loop is not loop:
            self._attach(loop)
        written = time.monotonic()
        pending = self._send(line)
        held = 0.0
        if not pending and not self._buffer and self._slow_runs < SLOW_RUNS:
            # Comparisons, not `min`: it parses keyword arguments at each call, at ten
            # times their cost.
            held = deadline - written
            held = held if held < HOLD_WAIT else HOLD_WAIT
            reply = self._one_read(held)
            if reply is not None:
                self._paced(written)
                return reply
        while True:
            if (not pending or self.process.exited) and (reply := self._reply()) is not None:
                if not self._stdout_watched:
                    self._watch_stdout()  # the loop stopped reading at the cap: room again
                self._paced(written, held)  # none within the hold: counted as such
                return reply
            await self._wait(deadline, write=bool(pending))
            if pending:
                pending = self._write(pending)

    def _paced(self, written: float, held: float = 0.0) -> None:
        """Count the reply to the line `written` then, after a hold of `held` seconds
        (`pace`): the loop waits for the next unless the hook is quick."""
        took = time.monotonic() - written
        self._slow_runs = (
            0 if took <= QUICK else runs_since_quick(self._slow_runs, took, held=held, quick=QUICK)
        )

    async def _wait(self, deadline: float, *, write: bool = False) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        loop, wakeup = self._loop, self._wakeup
        assert loop is not None  # `_attach` set both
        assert wakeup is not None
        if self._alarm_at > deadline:  # else the alarm set for an earlier event serves
            self._set_alarm(loop, remaining, deadline)
        self._waiter = waiter = wakeup(loop)
        stdin = self.process.stdin_fd if write else None
        if stdin is not None:
            loop.add_writer(stdin, waiter.wake)
        try:
            await waiter
        finally:
            self._waiter = None
            if stdin is not None:
                loop.remove_writer(stdin)

    def _set_alarm(self, loop: asyncio.AbstractEventLoop, delay: float, at: float) -> None:
        """Wake the waiter in `delay` seconds (monotonic `at`). One alarm serves the
        events that follow within a timeout: each asks for a wake-up by its deadline,
        and one that comes earlier (an earlier event's) only makes `ask` look at the
        clock and wait again: a timer per event would cost more than the exchange."""
        if self._alarm is not None:
            self._alarm.cancel()
        self._alarm = loop.call_later(delay, self._on_alarm)
        self._alarm_at = at

    def _on_alarm(self) -> None:
        self._alarm, self._alarm_at = None, math.inf
        if self._waiter is not None:
            self._waiter.wake()

    async def stop(self) -> None:
        """`stop_sync` in a worker thread: the loop serves others during the graces."""
        import asyncio

        if not self.stopped:
            self._detach()  # here, on the loop's own thread
            await asyncio.to_thread(self.stop_sync)

    def _attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Have the running `loop` watch stdout, stderr and the exit, from now on."""
        if self._loop is loop:
            return
        from hookgate.hooks.process.wakeup import Wakeup  # asyncio's: on a loop only

        self._wakeup = Wakeup  # a `from` import costs 1 µs: not one per event
        self._detach()
        self._loop = loop
        process = self.process
        self._watch_stdout()
        loop.add_reader(process.stderr.fd, self._read_stderr)
        watch_exit(loop, process.pid, process.pidfd, self._on_exit)

    def _detach(self) -> None:
        """Stop the loop watching our fds (a closed loop watches nothing any more)."""
        loop, self._loop = self._loop, None
        self._stdout_watched = False
        if self._alarm is not None:
            self._alarm.cancel()
            self._alarm, self._alarm_at = None, math.inf
        if loop is None or loop.is_closed():
            return
        for fd in (self.process.stdout.fd, self.process.stderr.fd, self.process.pidfd):
            if fd is not None:
                loop.remove_reader(fd)

    def _watch_stdout(self) -> None:
        """Have the loop read stdout, unless there is nothing more to read now: at end
        of file, or with more than a line may hold unread (a flood, or an answer of
        `LINE_CAP` bytes and its line's end, until `ask` takes it: `_reply`)."""
        if self._loop is None or self._stdout_watched:
            return
        if not (self._stdout_eof or len(self._buffer) > LINE_CAP):
            self._loop.add_reader(self.process.stdout.fd, self._on_stdout)
            self._stdout_watched = True

    def _on_stdout(self) -> None:
        if not self._read_stdout():
            return
        if self._loop is not None and (self._stdout_eof or len(self._buffer) > LINE_CAP):
            self._loop.remove_reader(self.process.stdout.fd)  # else ready forever, unread
            self._stdout_watched = False
        if self._waiter is not None:
            self._waiter.wake()

    def _on_exit(self) -> None:
        self.process.exited = True
        if self._loop is not None and self.process.pidfd is not None:
            self._loop.remove_reader(self.process.pidfd)
        if self._waiter is not None:
            self._waiter.wake()
        else:  # ended between events: what is left of its group killed, the leader
            self.process.reap()  # reaped, now (the next event may be hours away)


def _read_soon(fd: int, seconds: float) -> bytes | None:
    """What `fd` holds now, or once it holds something within `seconds`; None if it
    held nothing by then. Between two looks our processor is offered to whatever waits
    for it, which may be the process that is to answer (`os.sched_yield`)."""
    try:
        return os.read(fd, READ_CHUNK)
    except BlockingIOError:
        pass
    until = time.monotonic() + seconds
    while True:
        os.sched_yield()
        try:
            return os.read(fd, READ_CHUNK)
        except BlockingIOError:
            if time.monotonic() >= until:
                return None


def running_loop() -> asyncio.AbstractEventLoop:
    """`asyncio.get_running_loop`, looked up once (an `import` statement costs an
    event a microsecond)."""
    global _get_running_loop
    if _get_running_loop is None:
        from asyncio import get_running_loop

        _get_running_loop = get_running_loop
    return _get_running_loop()


_get_running_loop: Callable[[], asyncio.AbstractEventLoop] | None = None
