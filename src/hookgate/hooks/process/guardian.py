"""The guardian: stop every process marked with a token once its owner is gone.

Run as `python -I -S guardian.py VAR TOKEN GRACE POLL` by `guard.py`, with stdin a pipe
only the owner holds (usually exec'd by the waiting shell that guard.py starts, once the
owner is gone: stdin is then already at its end). End of file after a goodbye (any bytes) is a clean exit: nothing
to do. End of file without one means the owner died without cleaning up: every
process whose environment holds VAR=TOKEN gets SIGTERM, GRACE seconds to go (looked
at every POLL seconds), then SIGKILL. The standard library alone, and no environment:
this must start fast and not look like one of the owner's children.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator


def marked(needle: bytes) -> Iterator[int]:
    """Every process (but this one) whose environment holds `needle`."""
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                if needle in b"\0" + environ.read():
                    yield int(name)
        except OSError:
            continue  # gone, or not ours to read


def signal_all(needle: bytes, signum: int) -> None:
    for pid in marked(needle):
        try:
            os.kill(pid, signum)
        except OSError:
            continue


def main(var: str, token: str, grace: float, poll: float) -> None:
    for ignored in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(ignored, signal.SIG_IGN)  # a closed terminal or Ctrl-C is not our end
    told = b""
    while chunk := os.read(0, 4096):
        told += chunk
    if told:  # a clean exit said goodbye: what is left was left on purpose
        return
    needle = f"\0{var}={token}\0".encode()
    signal_all(needle, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(True for _ in marked(needle)):
        time.sleep(poll)
    signal_all(needle, signal.SIGKILL)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
