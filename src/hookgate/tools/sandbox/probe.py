"""Whether this machine can confine commands: one empty sandbox started, as `confine`
builds them, and its success remembered where the caller says.

A session whose commands run confined starts only where `probe()` finds bubblewrap
working; starting one costs ~4 ms of every session's start (and of each asked agent's
and team member's). Given a directory, a success is remembered there under a key of
everything it depends on: the program's file (path, inode, size, mtime), the probe's
own command line, the boot, this process's user, mount and PID namespaces (another
container is another key), the user id, and the kernel's user-namespace switches. A
failure is never remembered: once fixed, the next start finds it so, and says why
while it lasts. A stale success is not a way out of the sandbox: every confined
command runs bubblewrap itself, and one that cannot start fails the command.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from hookgate.hooks.files.digest import sha256

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
#: The folder, under the directory `probe` is given, of remembered successes.
REMEMBERED = "sandbox-probes"
#: What the kernel says of this process and machine that a working sandbox depends on.
_MACHINE = (
    "/proc/sys/kernel/random/boot_id", "/proc/self/ns/user", "/proc/self/ns/mnt",
    "/proc/self/ns/pid", "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
)  # fmt: skip

#: This process's finding, once made: (the program, None or why it cannot confine).
_found: tuple[str, str | None] | None = None


class SandboxUnavailable(Exception):
    """This machine cannot confine commands as the agent file asks."""


def bwrap_program() -> str:
    """The bubblewrap program's path, once `probe` found it working; else raises."""
    program, problem = _probed(None)
    if problem is not None:
        raise SandboxUnavailable(problem)
    return program


def probe(remember: Path | None = None) -> str | None:
    """None when commands can be confined here; else why not, in a user's words.

    Probed once per process; with `remember` (a cache directory), a success found
    there before, under the same key, is taken without starting a sandbox."""
    return _probed(remember)[1]


def _probed(remember: Path | None) -> tuple[str, str | None]:
    global _found
    if _found is None:
        _found = _remembered_or_probed(remember)
    return _found


def _remembered_or_probed(remember: Path | None) -> tuple[str, str | None]:
    program = _which(BWRAP)
    if program is None:
        return BWRAP, "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    true = _which("true") or "/bin/true"
    argv = [program, *NAMESPACES, *BASE_MOUNTS, "--", true]
    marker = None if remember is None else _marker(remember, argv)
    if marker is not None and marker.exists():
        return program, None
    problem = _start(argv)
    if problem is None and marker is not None:
        with contextlib.suppress(OSError):  # not remembered: probed again next time
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
    return program, problem


def _start(argv: list[str]) -> str | None:
    """Start one empty sandbox; None if it ran, else why not."""
    import subprocess  # here: a success remembered before starts none

    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", os.defpath)},
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start a sandbox: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        return f"bubblewrap could not start a sandbox here: {why}"
    return None


def _marker(directory: Path, argv: list[str]) -> Path | None:
    """The file that says a probe of `argv` succeeded on this machine, as it is now;
    None where the program cannot be looked at (then nothing is remembered)."""
    try:
        program = os.stat(argv[0])
    except OSError:
        return None
    key = [*argv, f"{program.st_dev}:{program.st_ino}:{program.st_size}:{program.st_mtime_ns}",
           f"uid {os.getuid()}", *(_kernel_says(path) for path in _MACHINE)]  # fmt: skip
    digest = sha256("\0".join(key).encode("utf-8", "surrogateescape")).hexdigest()
    return directory / REMEMBERED / digest


def _kernel_says(path: str) -> str:
    """The value (or namespace) at `path`, or that it has none."""
    with contextlib.suppress(OSError):
        if path.startswith("/proc/self/ns/"):
            return os.readlink(path)
        with open(path, encoding="utf-8", errors="replace") as file:
            return f"{path}={file.read().strip()}"
    return f"{path}: none"


def _which(program: str) -> str | None:
    """`program`'s path on hookgate's PATH (`shutil` costs a `-p` start bz2 and lzma).

    Absolute entries only: a relative one (`.`, an empty one) is the working directory,
    the model's to write, and the program found confines everything after it."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not os.path.isabs(folder):
            continue
        path = os.path.join(folder, program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None
