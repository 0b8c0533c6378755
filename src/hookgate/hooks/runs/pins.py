"""Pinned files: a hook runs only while every file it runs is the one trusted.

`whatruns.what_hook_runs` says which files a hook runs; `FilePins` holds their sha256
digests as trusted at session start and checks them before each run: a `stat` on the
hot path, a re-hash only when the stat changed, or while the file's last change is
within `RACY_NS` of the check (a write in the same tick of the file system's clock
keeps every time in the `stat`). A mismatch is an `UnpinnedFile`.
`SessionPins` is what the engine asks before each hook: which file, if any, changed.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks.config import HookSpec
from hookgate.hooks.files.digest import sha256
from hookgate.hooks.files.yamlfile import open_regular

#: How a folder's `SHADOWS` entry's path ends (`shadows.SHADOWS`, not imported: the hot
#: path of every check loads nothing more).
_SHADOWS_ENDING = os.sep + "(modules shadowing Python's)"
#: Bytes read at a time while hashing a file.
_CHUNK = 1024 * 1024

_StatKey = tuple[tuple[int, int, int, int, int] | None, ...]
#: Nanoseconds a file's ctime must lie behind a check for its `stat` to vouch for its
#: bytes: file systems stamp times from a clock that ticks every few milliseconds (and
#: every second or two on some), and a write within the tick of the check keeps them.
RACY_NS = 2_000_000_000


class UnpinnedFile(Exception):
    """A file a hook runs is not the one trusted: changed, gone, or never trusted."""


def file_digest(path: str | os.PathLike[str]) -> str | None:
    """The sha256 hex digest of the regular file at `path`, or of the folder's listing
    (`folder_digest`); None where there is neither.

    A named pipe or a device planted where a script should be is no file, and never
    hangs the reader (`open_regular`). A folder's `SHADOWS` entry is the digest of the
    modules it holds that would shadow Python's (`shadows`).
    """
    if str(path).endswith(_SHADOWS_ENDING):
        from hookgate.hooks.runs.shadows import shadows_digest

        return shadows_digest(Path(path).parent)
    try:
        file = open_regular(path)
    except IsADirectoryError:  # where a folder cannot be opened for reading
        return folder_digest(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return "unreadable"
    if file is None:
        return folder_digest(path) if os.path.isdir(path) else None
    with file:
        digest = sha256()
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def folder_digest(path: str | os.PathLike[str]) -> str:
    """The sha256 hex digest of which entries the folder at `path` holds: each name,
    its kind, and a link's target (not their content: each file is pinned by its own).
    `__pycache__` is left out: Python writes it as a hook's modules are imported."""
    entries = []
    try:
        with os.scandir(os.fsencode(path)) as listing:
            for entry in listing:
                if entry.name == b"__pycache__":
                    continue
                if entry.is_symlink():
                    kind = b"link " + os.readlink(entry.path)
                else:
                    kind = b"folder" if entry.is_dir() else b"file" if entry.is_file() else b"other"
                entries.append(entry.name + b"\0" + kind)
    except OSError:
        return "unreadable"
    return sha256(b"folder\n" + b"\n".join(sorted(entries))).hexdigest()


def command_words(hook: HookSpec) -> list[str]:
    """The words of the hook's command line, `VAR=value` prefixes dropped (shlex's
    reading, which needs no parser: `hooks check` names the program with it)."""
    if hook.args is not None:
        return list(hook.args)
    try:
        words = shlex.split(hook.command or "", comments=True)
    except ValueError:
        return []  # the shell would refuse it; there is no file to pin
    while words and "=" in words[0] and not words[0].startswith(("=", "/", ".")):
        words.pop(0)
    return words


class FilePins:
    """Trusted digests by absolute path; `check(path)` raises `UnpinnedFile` on a mismatch."""

    def __init__(self, digests: Mapping[str, str | None], *, settle_ns: int = RACY_NS) -> None:
        self._digests = dict(digests)
        self._verified: dict[str, _StatKey] = {}
        self._watched: dict[str, list[str]] = {}  # a `SHADOWS` entry's: the folders statted
        self.settle_ns = settle_ns

    def check(self, path: Path) -> None:
        key = str(path)
        if key not in self._digests:
            raise UnpinnedFile(f"{path} is not among the files trusted for this session")
        stat_key = self._stat_key(key)
        if stat_key and None not in stat_key and self._verified.get(key) == stat_key:
            return
        if key.endswith(_SHADOWS_ENDING):
            self._watched.pop(key, None)  # re-listed: a folder may have come or gone
            stat_key = self._stat_key(key)
        if file_digest(key) != self._digests[key]:
            self._verified.pop(key, None)
            raise UnpinnedFile(_changed(path))
        settled = time.time_ns() - self.settle_ns
        if stat_key and all(st is not None and st[4] <= settled for st in stat_key):
            self._verified[key] = stat_key  # settled: the same `stat` means the same bytes

    def _stat_key(self, key: str) -> _StatKey:
        """What `stat` says of the file at `key`; for a `SHADOWS` entry, of its folder and
        the folders in it named like a module (`shadows.watched`), listed once per change."""
        if not key.endswith(_SHADOWS_ENDING):
            return (_stat(key),)
        if key not in self._watched:
            from hookgate.hooks.runs.shadows import watched

            self._watched[key] = watched(Path(key).parent)
        return tuple(_stat(path) for path in self._watched[key])


def _stat(path: str) -> tuple[int, int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _changed(path: Path) -> str:
    """Why a hook is refused: the file that changed, or the module planted beside it."""
    if str(path).endswith(_SHADOWS_ENDING):
        from hookgate.hooks.runs.shadows import shadowing

        planted = ", ".join(str(entry) for entry in shadowing(path.parent)) or "one removed"
        return (
            f"{path.parent} holds a module that would shadow one the hook's Python imports "
            f"({planted}), not there when the project was trusted; it is not run "
            "(remove it, or run `hookgate trust` to trust it for the next session)"
        )
    return (
        f"{path} changed since the session started; it is not run "
        "(run `hookgate trust` to trust the new version for the next session)"
    )


class SessionPins:
    """The pins of one session's hooks: `changed(hook)` before each run of a hook.

    What each hook runs is resolved at its first run (`what_hook_runs`, from
    `base_dir`, as trust resolved it), then kept: a start-up pays nothing for hooks
    that never run.
    """

    def __init__(self, digests: Mapping[str, str | None], base_dir: Path) -> None:
        self._pins = FilePins(digests)
        self._base_dir = base_dir
        self._files: dict[int, tuple[Path, ...]] = {}

    def changed(self, hook: HookSpec) -> str | None:
        """None while every file `hook` runs has its trusted digest; else what is wrong,
        naming the file and never showing its content."""
        files = self._files.get(id(hook))
        if files is None:
            from hookgate.hooks.runs.whatruns import what_hook_runs

            files = self._files[id(hook)] = what_hook_runs(hook, self._base_dir).files
        try:
            for path in files:
                self._pins.check(path)
        except UnpinnedFile as exc:
            return str(exc)
        return None
