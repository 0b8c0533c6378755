"""`adopt_orphans`: make this process the reaper of its descendants' orphans.

Standard library only, and importing nothing of hookgate: the shell tool's reaper
(`hookgate/tools/reaper.py`) loads this file by its path in a bare interpreter, so
that the hook runner and the reaper share one mechanism.
"""

from __future__ import annotations

import os
from errno import EINTR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: prctl(2) option that makes a process the reaper of its descendants' orphans.
_PR_SET_CHILD_SUBREAPER = 36
#: Whether `adopt_orphans` made this process a subreaper: only then can a killed
#: member of a child's process group become our child, to be reaped by us.
adopting = False
#: libc's waitpid(2) and ctypes' errno, loaded by `adopt_orphans` (`reap_group`).
_waitpid: Any = None
_get_errno: Any = None


def adopt_orphans() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux only).

    A hook's grandchild outlives its parent, is killed with the group, and must then be
    reaped by someone: normally PID 1, but a container's PID 1 often never reaps, and
    every killed grandchild would stay a zombie. Call this once at start-up in a
    program that runs hooks; it returns whether the kernel agreed.
    """
    import ctypes  # here: 2 ms to import, paid by the process that adopts alone

    global adopting, _waitpid, _get_errno
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _waitpid, _get_errno = libc.waitpid, ctypes.get_errno
        # Asked again even where `adopting` says yes: a forked child inherits the flag,
        # not the setting (the worse a stale flag does is one wait that finds nothing).
        adopting = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        adopting = False
    return adopting


def reap_group(pgid: int) -> None:
    """Reap our children in process group `pgid`, waiting for each (they were sent
    SIGKILL: each wait is short), until none is left.

    Called after each hook where we adopt orphans; the usual group has no member of
    ours left. libc's waitpid, where `adopt_orphans` loaded it, says so (ECHILD) in its
    return value, where `os.waitpid` raises it: the exception cost every hook 10 µs of
    processor time, the call 1.
    """
    wait = _waitpid
    if wait is None:
        try:
            while True:
                os.waitpid(-pgid, 0)
        except ChildProcessError:
            return
    while wait(-pgid, None, 0) > 0 or _get_errno() == EINTR:
        pass
