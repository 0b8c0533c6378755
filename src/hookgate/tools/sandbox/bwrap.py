"""The boundaries as the kernel enforces them: a command run under bubblewrap.

`confine(argv, boundaries)` is the command line that runs `argv` in new mount, PID,
network, IPC, UTS, cgroup and user namespaces with every capability dropped:

- the whole file system read-only, then each writable dir bound writable over it;
- each file of the trust closure inside a writable dir bound read-only over itself,
  and every directory between it and that dir made a mount point, so that neither
  the file nor a folder holding it can be written, deleted, renamed or replaced;
- `$HOOKGATE_HOME` covered by an empty read-only tmpfs;
- a fresh `/proc` that shows the sandbox's own processes only (hookgate's environment
  is not among them), a minimal `/dev`;
- without `network: true`, no network interface but a loopback of its own: nothing
  outside answers, hookgate's machine's loopback included; `/run` (system sockets)
  is covered too;
- no new user namespace inside (`--disable-userns`): the read-only mounts stay locked.

The sandbox dies with its parent (`--die-with-parent`), and everything in it with its
first process (PID 1 of its namespace: hookgate's reaper). `probe()` says whether this machine can do all this.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from hookgate.tools.sandbox.boundaries import Boundaries, within

#: The program; Debian's package `bubblewrap` installs it as /usr/bin/bwrap.
BWRAP = "bwrap"
#: Seconds the start-up probe may take: a sandbox that cannot start in that is broken.
PROBE_TIMEOUT = 10.0
#: What every sandbox is: its own namespaces, no capability, no nested user namespace.
#: The command is PID 1 of its namespace (`--as-pid-1`): bubblewrap's own init would be
#: orphaned when bubblewrap exits, and linger as a zombie of hookgate's. hookgate always
#: puts its reaper there (`tools/reaper.py`), which handles signals and reaps as PID 1
#: must; when it exits, the kernel kills whatever else is left in the namespace.
NAMESPACES = (
    "--die-with-parent", "--unshare-all", "--unshare-user", "--disable-userns", "--as-pid-1",
    "--cap-drop", "ALL",
)  # fmt: skip
#: The file system every sandbox starts from: all of it, read-only, with its own
#: /proc and /dev.
BASE_MOUNTS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
#: Covered when the network is off: system sockets (D-Bus, systemd) live there.
SYSTEM_SOCKETS = Path("/run")


class SandboxUnavailable(Exception):
    """This machine cannot confine commands as the agent file asks."""


def confine(argv: Sequence[str], boundaries: Boundaries) -> list[str]:
    """`argv` run under bubblewrap within `boundaries`; raises `SandboxUnavailable`."""
    program = bwrap_program()
    args = [program, *NAMESPACES]
    if boundaries.sandbox.network:
        args.append("--share-net")
    args += BASE_MOUNTS
    for directory in boundaries.writable:
        args += ["--bind", str(directory), str(directory)]
    args += _pinned(boundaries)
    if not boundaries.sandbox.network and SYSTEM_SOCKETS.is_dir():
        args += _covered(SYSTEM_SOCKETS)
    for directory in boundaries.hidden:
        if directory.is_dir():
            args += _covered(directory)
    return [*args, "--", *argv]


def _pinned(boundaries: Boundaries) -> list[str]:
    """Mounts that make each protected file in a writable dir, and its folders, stay put."""
    args: list[str] = []
    pinned_dirs: set[Path] = set()
    for path in sorted(boundaries.protected):
        if boundaries.hides(path) or not within(path, boundaries.writable):
            continue  # hidden, or read-only already
        if not path.exists():
            continue  # a mount would create it; the trust check refuses it once it exists
        root = max((r for r in boundaries.writable if path.is_relative_to(r)), key=_depth)
        for folder in reversed(path.parents):
            if folder.is_relative_to(root) and folder != root and folder not in pinned_dirs:
                pinned_dirs.add(folder)  # a mount point cannot be renamed or removed
                args += ["--bind", str(folder), str(folder)]
        args += ["--ro-bind", str(path), str(path)]
    return args


def _covered(directory: Path) -> list[str]:
    return ["--tmpfs", str(directory), "--remount-ro", str(directory)]


def _depth(path: Path) -> int:
    return len(path.parts)


def bwrap_program() -> str:
    """The bubblewrap program's path, once `probe` found it working; else raises."""
    program, problem = _probed()
    if problem is not None:
        raise SandboxUnavailable(problem)
    return program


def probe() -> str | None:
    """None when commands can be confined here; else why not, in a user's words."""
    return _probed()[1]


@functools.cache
def _probed() -> tuple[str, str | None]:
    """Start one empty sandbox, as `confine` builds them, once per process."""
    program = _which(BWRAP)
    if program is None:
        return BWRAP, "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    true = _which("true") or "/bin/true"
    try:
        done = subprocess.run(
            [program, *NAMESPACES, *BASE_MOUNTS, "--", true],
            capture_output=True, timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", os.defpath)},
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return program, f"bubblewrap could not start a sandbox: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        return program, f"bubblewrap could not start a sandbox here: {why}"
    return program, None


def _which(program: str) -> str | None:
    """`program`'s path on hookgate's PATH (`shutil` costs a `-p` start bz2 and lzma)."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or ".", program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None
