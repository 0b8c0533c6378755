"""Landlock's scopes: a sandboxed command reaches no abstract Unix socket, and signals
no process, outside its sandbox.

An abstract Unix socket (X11's `@/tmp/.X11-unix/X0`, a containerd shim's, an old
D-Bus bus's) has no file, so no mount hides it; it belongs to a network namespace.
Without `network: true` the sandbox has a namespace of its own; with it, it shares the
machine's, and a command would reach the display server (and type into the user's
terminal) or a container runtime. Landlock (ABI 6, Linux 6.12) scopes both abstract
sockets and signals to a domain: `scope_self()` makes one of the calling process, and
everything it starts stays in it. The shell tool's reaper calls it inside bubblewrap
before it starts the command (`reaper.py --scoped`); the reaper itself is in the
domain, and signals what it started.

Standard library only, importing nothing of hookgate: the reaper loads this file by
its path in a bare interpreter (`-I -S`, where no library could be imported), so the
three system calls are made with ctypes.
"""

from __future__ import annotations

import ctypes
import os
import sys

#: landlock_create_ruleset(2) and landlock_restrict_self(2): one number on every
#: architecture (system calls added since Linux 5.1 share the table).
_CREATE_RULESET = 444
_RESTRICT_SELF = 446
#: landlock_create_ruleset's flag that asks for the ABI version instead.
_CREATE_RULESET_VERSION = 1
#: The scopes: abstract Unix sockets, signals (ABI 6).
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
_SCOPE_SIGNAL = 1 << 1
#: The first ABI that has them.
SCOPES_ABI = 6
#: prctl(2): no new privileges, which an unprivileged process needs to restrict itself.
_PR_SET_NO_NEW_PRIVS = 38


class _RulesetAttr(ctypes.Structure):
    """`struct landlock_ruleset_attr` as of ABI 6: no file system or network access
    handled (bubblewrap's mounts and namespaces do those), the scopes alone."""

    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


def abi() -> int:
    """The Landlock ABI this kernel offers; 0 where it has none (or it is off)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = libc.syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def scope_self() -> bool:
    """Scope this process, and all it starts from now on, to a Landlock domain of its
    own: no abstract Unix socket made outside it is reached, no process outside it is
    signalled. False where the kernel cannot (before ABI 6), nothing changed then."""
    if abi() < SCOPES_ABI:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    attr = _RulesetAttr(0, 0, _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        return False
    try:
        return bool(libc.syscall(_RESTRICT_SELF, ruleset, 0) == 0)
    finally:
        os.close(ruleset)
