"""stdout that fails: one line on stderr and a documented exit code, never a traceback.

A reader that stops early (`| head`) ends a command quietly with `EXIT_BROKEN_PIPE`, as
a tool SIGPIPE stopped does. Any other write error (a full disk, `> /dev/full`, a
read-only file) is `OutputFailed`: the command stops, says so in one line, and exits
`EXIT_OUTPUT_FAILED`. `guard_stdout` makes every `print` raise it; front ends that
write stdout themselves (ACP) raise it where they find the failure.
"""

from __future__ import annotations

import errno
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
    from typing import Any
else:
    # signal's C half, the numbers alone: `signal` makes three enums of them at import
    # (3 M instructions, 2 % of a `hooks fire`).
    import _signal as signal

#: What a shell reports for a writer stopped by a closed pipe, as for `yes | head -1`.
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
#: stdout could not be written (sysexits.h's EX_IOERR).
EXIT_OUTPUT_FAILED = 74


class OutputFailed(OSError):
    """Writing stdout failed for a reason other than a reader that left (EPIPE)."""


def output_failure(exc: OSError) -> str:
    """The line on stderr for a stdout that failed with `exc`."""
    reason = exc.strerror or os.strerror(exc.errno or errno.EIO)
    return f"hookgate: cannot write to stdout: {reason}; stopped"


def quiet_stdout() -> None:
    """Point fd 1 at /dev/null: the interpreter's last flush must not fail, and print,
    once more on the way out."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class _GuardedStdout:
    """`sys.stdout`, whose write errors are `OutputFailed` (EPIPE stays BrokenPipeError)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputFailed(exc.errno, exc.strerror) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputFailed(exc.errno, exc.strerror) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """From now on, a failed write to `sys.stdout` raises `OutputFailed`."""
    if sys.stdout is not None and not isinstance(sys.stdout, _GuardedStdout):
        sys.stdout = _GuardedStdout(sys.stdout)
