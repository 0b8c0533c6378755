"""A resident process's pipes, a line at a time: the event's line written to stdin,
the reply's line read from stdout, the tail of stderr kept (`Pipes`, which `Resident`
drives: when to read and how to wait are its part).

A reply line longer than `LINE_CAP`, an exit or end of file before the reply, is a
`ResidentFailure` (`ResidentGone` when the process had exited with the line unread:
nothing learns of an idle exit before an event is written). stderr's last
`STDERR_KEEP` bytes are kept for those failures' messages.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from hookgate.hooks.errors import HookgateError
from hookgate.hooks.process.core import (
    OUTPUT_CAP,
    READ_BUDGET,
    READ_CHUNK,
    Process,
    exited_unreaped,
)

if TYPE_CHECKING:  # the loop is the driver's (`Resident.ask`): no import here
    import asyncio

#: Bytes a reply line may have; a longer one is a flood: the process is stopped.
LINE_CAP = OUTPUT_CAP
#: Bytes of stderr kept (the latest), quoted when the process fails.
STDERR_KEEP = 2048
#: Seconds waited for the exit of a process whose stdout closed before its reply.
_EXIT_AFTER_EOF = 0.05


class ResidentFailure(HookgateError):
    """The resident process died, flooded or broke the protocol before it replied."""


class ResidentGone(ResidentFailure):
    """The process had ended before it read the event: it ended while idle, unless it
    was started for this event."""


class Pipes:
    """A started process's three pipes: stdin written without blocking, stdout read
    into a buffer a line is taken from, stderr's tail kept; and how it ended."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self._buffer = bytearray()
        self._stdout_eof = False
        self._sent = 0  # bytes of the current event's line written
        self._pieces: Iterator[bytes] | None = None  # of the line, not yet made
        self._stderr = bytearray()
        self.stopped = False
        #: The event loop that watches our fds, where one does (the driver attaches it).
        self._loop: asyncio.AbstractEventLoop | None = None
        self._poll = select.poll()
        for fd in (process.stdout.fd, process.stderr.fd, process.pidfd):
            if fd is not None:
                self._poll.register(fd, select.POLLIN)
        assert process.stdin_fd is not None
        os.set_blocking(process.stdin_fd, False)

    def has_exited(self) -> bool:
        """Whether the process has ended (it stays unreaped until `stop`)."""
        if not self.process.exited and exited_unreaped(self.process.pid, block=False):
            self.process.exited = True
        return self.process.exited

    def _read_stdout(self) -> bool:
        """Read what stdout holds, up to a line's end; whether a reply can be taken now
        (a whole line, end of file, or more than a line may hold)."""
        while not self._stdout_eof and len(self._buffer) <= LINE_CAP:
            try:
                chunk = os.read(self.process.stdout.fd, READ_CHUNK)
            except BlockingIOError:
                return False
            except OSError:
                chunk = b""
            if not chunk:
                self._stdout_eof = True
            self._buffer += chunk
            if chunk.find(b"\n") >= 0:  # not `in`, which raises and clears a TypeError
                return True
        return True

    def _read_stderr(self) -> None:
        """Keep the tail of what stderr holds now; at most `READ_BUDGET` bytes a call, so
        that a flood cannot hold the loop (the caller's wait comes round again)."""
        budget = READ_BUDGET
        while budget > 0:
            try:
                chunk = os.read(self.process.stderr.fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                if self._loop is not None:  # at end of file it would be ready forever
                    self._loop.remove_reader(self.process.stderr.fd)
                with contextlib.suppress(KeyError):
                    self._poll.unregister(self.process.stderr.fd)
                return
            budget -= len(chunk)
            self._stderr = (self._stderr + chunk)[-STDERR_KEEP:]

    def _reply(self) -> bytes | None:
        """The next complete line; raises `ResidentFailure` if none can come any more.
        Taking one makes room: a loop that stopped reading at the cap is the driver's
        to start again (`Resident.ask`)."""
        end = self._buffer.find(b"\n")
        if 0 <= end <= LINE_CAP:
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            return line
        if len(self._buffer) > LINE_CAP:
            raise ResidentFailure(f"a reply line passed {LINE_CAP:,} bytes{self._tail()}")
        if self._stdout_eof or self.process.exited:
            if self._ended_before_reading():
                raise ResidentGone(f"{self._ended()} before it read the event{self._tail()}")
            raise ResidentFailure(f"{self._ended()} before it replied{self._tail()}")
        return None

    def _ended_before_reading(self) -> bool:
        """Whether the process has exited with none of this event's line read: what it
        left in its stdin holds all we wrote (a pipe is read from the front)."""
        process = self.process
        if not self.has_exited() and process.pidfd is not None:
            # A dying process's pipes close before its exit shows: a moment's wait lets
            # the message say how it ended rather than that its stdout closed.
            select.select([process.pidfd], [], [], _EXIT_AFTER_EOF)
        if not self.has_exited() or process.stdin_fd is None:
            return False
        import fcntl  # here: only a process that ended asks
        import termios

        try:
            unread = fcntl.ioctl(process.stdin_fd, termios.FIONREAD, bytes(4))
        except OSError:
            return False
        return int.from_bytes(unread, sys.byteorder) >= self._sent

    def _ended(self) -> str:
        if not self.has_exited():
            return "closed its stdout"
        self._read_stderr()
        self.process.reap()
        code = self.process.returncode
        return f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"

    def _tail(self) -> str:
        text = self._stderr.decode("utf-8", "replace").strip()
        return f": {text[-300:]}" if text else ""

    def _send(self, line: bytes | Iterator[bytes]) -> bytes | memoryview:
        """Start writing an event's `line`, whole or in pieces (made as the pipe takes
        them: a large event is never held whole); what is left for `_write`."""
        self._sent = 0
        if isinstance(line, bytes):
            self._pieces = None
            fd = self.process.stdin_fd
            if fd is not None:  # the usual line, taken whole by the pipe: one write
                try:
                    written = os.write(fd, line)
                except OSError:  # a full pipe, or a closed one: `_write` tells which
                    return self._write(line)
                self._sent = written
                # The rest, if any, as `_write` writes it: a view, not a copy.
                return b"" if written == len(line) else self._write(memoryview(line)[written:])
            return self._write(line)
        self._pieces = line
        return self._write(b"")

    def _write(self, pending: bytes | memoryview) -> bytes | memoryview:
        """Write what the pipe takes now of `pending`, then of the pieces still to make;
        what is left (empty once the whole line is written)."""
        fd = self.process.stdin_fd
        if fd is None:
            raise ResidentFailure(f"{self._ended()} before it read the event{self._tail()}")
        try:
            while True:
                while pending:
                    written = os.write(fd, pending)
                    self._sent += written
                    # The whole line, usually: a view to slice only for what is left.
                    pending = b"" if written == len(pending) else memoryview(pending)[written:]
                if self._pieces is None:
                    break
                piece = next(self._pieces, None)
                if piece is None:
                    self._pieces = None
                    break
                pending = piece
        except BlockingIOError:
            pass
        except OSError as exc:  # EPIPE: it closed its stdin, or is gone
            self._pieces = None
            if self._ended_before_reading():
                raise ResidentGone(
                    f"{self._ended()} before it read the event{self._tail()}"
                ) from exc
            raise ResidentFailure(
                f"does not read its stdin ({exc.strerror}){self._tail()}"
            ) from exc
        return pending

    def _finish(self) -> None:
        self.stopped = True
        self._pieces = None  # what is not made yet never is
        self.process.reap()
        self.process.release()
