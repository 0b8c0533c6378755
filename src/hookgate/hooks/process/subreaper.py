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
    global adopting, _waitpid, _get_errno
    try:
        from _ctypes import get_errno  # ctypes.get_errno

        prctl, _waitpid = _libc("prctl", "waitpid")
        _get_errno = get_errno
        # Asked again even where `adopting` says yes: a forked child inherits the flag,
        # not the setting (the worse a stale flag does is one wait that finds nothing).
        adopting = prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        adopting = False
    return adopting


def _libc(*names: str) -> tuple[Any, ...]:
    """libc's functions `names`, each returning a C int and keeping errno for
    `get_errno`: what `ctypes.CDLL(None, use_errno=True).<name>` gives, made from
    `_ctypes` the way `CDLL` makes it.

    The `ctypes` package around `_ctypes` (its C types, `struct`, the byte-order
    classes) was 6 M instructions of a `hooks fire` (4 %), for two calls that need
    none of it.
    """
    import _ctypes  # here: paid by the process that adopts alone

    class CInt(_ctypes._SimpleCData):  # type: ignore[type-arg]  # ctypes.c_int
        _type_ = "i"

    class LibcFunction(_ctypes.CFuncPtr):  # CDLL's `_FuncPtr`, with use_errno=True
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = CInt

    # What a function looked up by name asks of its library: the dlopen handle of the
    # program itself (None, as `CDLL(None)` passes), which holds the libc it links.
    handle = _ctypes.dlopen(None, _ctypes.RTLD_LOCAL)  # type: ignore[arg-type]
    libc: Any = type("Libc", (), {"_handle": handle})
    return tuple(LibcFunction((name, libc)) for name in names)


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
