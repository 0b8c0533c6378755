"""The boundaries as the kernel enforces them: a command run under bubblewrap.

`confine(argv, boundaries)` is the command line that runs `argv` in new mount, PID,
network, IPC, UTS, cgroup and user namespaces with every capability dropped:

- the whole file system read-only, then each writable dir bound writable over it;
- each file of the trust closure inside a writable dir bound read-only over itself,
  and every directory between it and that dir made a mount point, so that neither
  the file nor a folder holding it can be written, deleted, renamed or replaced; so
  too what programs outside the sandbox run from a writable dir (`.git`, `.vscode`,
  `.claude`, `.bashrc`, …: `boundaries.RUN_OUTSIDE`);
- `$HOOKGATE_HOME` and `sandbox.hidden` (the user's credentials by default) covered
  by an empty read-only tmpfs, a hidden file by a device no one may open;
- a fresh `/proc` that shows the sandbox's own processes only (hookgate's environment
  is not among them), a minimal `/dev`;
- without `network: true`, no network interface but a loopback of its own: nothing
  outside answers, hookgate's machine's loopback included;
- `/run` (system sockets: docker's, D-Bus's) and the display server's socket folders
  covered, network or not; with the network on, the resolver's folder in `/run` is
  bound back; `/tmp` (tmux's and ssh-agent's sockets) covered, what the command
  needs from it bound back;
- no new user namespace inside (`--disable-userns`): the read-only mounts stay locked.

Inside, the reaper takes itself and the command into a Landlock domain of their own
(`landlock.scope_self`): no abstract Unix socket outside is reached, network or not.

The sandbox dies with its parent (`--die-with-parent`), and everything in it with its
first process (PID 1 of its namespace: hookgate's reaper). `probe()` says whether this machine can do all this.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from hookgate.tools.sandbox.boundaries import Boundaries, outermost, under, within
from hookgate.tools.sandbox.probe import BASE_MOUNTS, NAMESPACES, bwrap_program
from hookgate.tools.sandbox.probe import SandboxUnavailable as SandboxUnavailable
from hookgate.tools.sandbox.probe import probe as probe

#: Covered, network or not: system sockets live there (docker's, D-Bus's, the user's
#: systemd's), each a way out of any sandbox (`docker run -v /:/host`, `systemd-run`).
SYSTEM_SOCKETS = Path("/run")
#: Covered too, a network namespace or not: the display server's and the session
#: manager's sockets, a file system's, through which a command would type into the
#: user's terminal.
DISPLAY_SOCKETS = (Path("/tmp/.X11-unix"), Path("/tmp/.ICE-unix"))
#: Covered too, but for what a command needs from it (`_kept_in_tmp`): the shared
#: temporary folder, where the user's programs keep their sockets, each a way out —
#: tmux's server (`tmux send-keys` types into the user's shell), ssh-agent's (the
#: user's keys), an editor's server — and other programs their files.
SHARED_TMP = Path("/tmp")
#: hookgate's own package, which the reaper runs from inside the sandbox.
_PACKAGE = Path(__file__).resolve().parents[2]
#: Where the machine's resolver settings say how names resolve.
RESOLV_CONF = "/etc/resolv.conf"


def confine(argv: Sequence[str], boundaries: Boundaries) -> list[str]:
    """`argv` run under bubblewrap within `boundaries`; raises `SandboxUnavailable`."""
    program = bwrap_program()
    args = [program, *NAMESPACES]
    if boundaries.sandbox.network:
        args.append("--share-net")
    args += BASE_MOUNTS
    kept = _kept_in_tmp(boundaries)
    if kept is not None:  # read-only once every mount point in it is made, at the end
        args += ["--tmpfs", str(SHARED_TMP)]
        for directory in kept:
            args += ["--ro-bind", str(directory), str(directory)]
    for directory in boundaries.writable:
        args += ["--bind", str(directory), str(directory)]
    args += _pinned(boundaries)
    if SYSTEM_SOCKETS.is_dir():  # with the network on too: a socket is no network
        resolver = _name_resolution() if boundaries.sandbox.network else []
        args += _covered(SYSTEM_SOCKETS, resolver)
    display = DISPLAY_SOCKETS if kept is None else ()  # in `/tmp`, covered with it
    for path in (*display, *boundaries.hidden):
        if path.is_dir():
            args += _covered(path)
        elif path.exists():  # a file: a device in its place, which `/dev`'s rules forbid
            args += ["--ro-bind", os.devnull, str(path)]
    if kept is not None:
        args += ["--remount-ro", str(SHARED_TMP)]
    return [*args, "--", *argv]


def _kept_in_tmp(boundaries: Boundaries) -> list[Path] | None:
    """What a command reads in `SHARED_TMP` once it is covered: the workspace, the
    user's home (a container's is often there), and what it runs from (hookgate's
    interpreter and package, which the reaper needs, the `PATH` directories) where they
    lie in it; the writable dirs are bound anyway. None where it cannot be covered: one
    of them is `SHARED_TMP` itself, or holds it."""
    if not SHARED_TMP.is_dir():
        return None
    interpreter = Path(os.path.realpath(sys.executable)).parent
    readable = {*boundaries.workspace, *boundaries.runs_from, *boundaries.writable}
    readable |= {Path(sys.prefix), Path(sys.base_prefix), interpreter, _PACKAGE, _home()}
    if any(under(SHARED_TMP, directory) for directory in readable):
        return None
    inside = [d for d in readable if under(d, SHARED_TMP) and not within(d, boundaries.writable)]
    return list(outermost(tuple(sorted(inside))))


def _pinned(boundaries: Boundaries) -> list[str]:
    """Mounts that make each protected file in a writable dir, and its folders, stay put;
    a protected folder (a hook's own, `.git`) read-only whole, nothing added to it either."""
    args: list[str] = []
    pinned_dirs: set[Path] = set()
    protected = {*boundaries.protected, *boundaries.present_outside()}
    folders = tuple(path for path in protected if path.is_dir())
    for path in sorted(protected):
        if boundaries.hides(path) or not within(path, boundaries.writable):
            continue  # hidden, or read-only already
        if not path.exists():
            continue  # a mount would create it; the trust check refuses it once it exists
        if any(path != folder and under(path, folder) for folder in folders):
            continue  # read-only with its folder
        root = max((r for r in boundaries.writable if under(path, r)), key=_depth)
        for folder in reversed(path.parents):
            if under(folder, root) and folder != root and folder not in pinned_dirs:
                pinned_dirs.add(folder)  # a mount point cannot be renamed or removed
                args += ["--bind", str(folder), str(folder)]
        args += ["--ro-bind", str(path), str(path)]
    return args


def _home() -> Path:
    """The user's home, as the command's `~` names it (`/` where there is none)."""
    return Path(os.path.realpath(os.path.expanduser("~")))


def _name_resolution() -> list[str]:
    """The folder under `/run` that `/etc/resolv.conf` leads to (systemd-resolved's
    stub), bound back read-only over the covered `/run`: with the network on, names
    resolve as on the machine."""
    real = Path(os.path.realpath(RESOLV_CONF))
    if real.is_relative_to(SYSTEM_SOCKETS) and real.parent != SYSTEM_SOCKETS:
        return ["--ro-bind", str(real.parent), str(real.parent)]
    return []


def _covered(directory: Path, kept: Sequence[str] = ()) -> list[str]:
    """`directory` hidden under an empty read-only tmpfs, with the `kept` mounts in it
    (made before it turns read-only: each needs a mount point made there)."""
    return ["--tmpfs", str(directory), *kept, "--remount-ro", str(directory)]


def _depth(path: Path) -> int:
    return len(path.parts)
