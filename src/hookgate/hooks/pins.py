"""Pinned files: a process hook runs only while the script files it names are unchanged.

`hook_files` says which files a hook runs (its program when given as a path, and the
relative words of its command line that name scripts); `FilePins` holds their sha256
digests as trusted at session start and checks them before each spawn: a `stat` on
the hot path, a re-hash only when the stat changed. A mismatch is an `UnpinnedFile`.
"""

from __future__ import annotations

import itertools
import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks.config import HookSpec
from hookgate.hooks.digest import sha256
from hookgate.hooks.yamlfile import open_regular

#: Bytes read at a time while hashing a file.
_CHUNK = 1024 * 1024
#: Where the system's own programs live: a package manager, not a repository, writes
#: there, so they are not pinned (an upgrade would untrust every project).
_SYSTEM_DIRS = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/etc/")
#: Endings of files an interpreter runs or a tool reads as a program (`jq -f x.jq`).
_SCRIPT_SUFFIXES = frozenset(
    {".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php",
     ".lua", ".jq", ".awk", ".sed", ".ps1"}
)  # fmt: skip
#: A word after one of these is where output goes (or input comes from), not a program.
_REDIRECTIONS = (">", "<", ">|")

_StatKey = tuple[int, int, int, int, int]


class UnpinnedFile(Exception):
    """A file a hook runs is not the one trusted: changed, gone, or never trusted."""


def file_digest(path: str | os.PathLike[str]) -> str | None:
    """The sha256 hex digest of the regular file at `path`; None where there is none.

    A named pipe or a device planted where a script should be is no file, and never
    hangs the reader (`open_regular`).
    """
    try:
        file = open_regular(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return "unreadable"
    if file is None:
        return None
    with file:
        digest = sha256()
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def command_words(hook: HookSpec) -> list[str]:
    """The words of the hook's command line, `VAR=value` prefixes dropped."""
    if hook.args is not None:
        return list(hook.args)
    try:
        words = shlex.split(hook.command or "", comments=True)
    except ValueError:
        return []  # the shell would refuse it; there is no file to pin
    while words and "=" in words[0] and not words[0].startswith(("=", "/", ".")):
        words.pop(0)
    return words


def files_named(words: list[str], cwd: Path) -> list[Path]:
    """The program when given as a path (present or not), and the relative words naming
    scripts: existing files that are executable or end like a script (`python3 x.py`).

    A log a hook appends to (`>> audit.log`, `tee -a audit.log`) is no script: pinning
    it would untrust the file at its first run.
    """
    if not words:
        return []
    files: list[Path] = []
    if os.sep in words[0] and not _system_file(cwd / words[0]):
        files.append(Path(os.path.normpath(cwd / words[0])))
    for before, word in itertools.pairwise(words):
        if before.endswith(_REDIRECTIONS) or word.startswith(("-", os.sep)) or "\x00" in word:
            continue
        candidate = Path(os.path.normpath(cwd / word))
        if _is_script(candidate):
            files.append(candidate)
    return files


def _is_script(path: Path) -> bool:
    if not path.is_file():
        return False
    return path.suffix in _SCRIPT_SUFFIXES or os.access(path, os.X_OK)


def _system_file(path: Path) -> bool:
    return os.path.realpath(path).startswith(_SYSTEM_DIRS)


def hook_files(hook: HookSpec, default_cwd: Path) -> list[Path]:
    """The files a process hook runs, resolved where it runs (its `cwd`, else `default_cwd`)."""
    if hook.function is not None or hook.python is not None or hook.model is not None:
        return []
    return files_named(command_words(hook), Path(hook.cwd) if hook.cwd else default_cwd)


class FilePins:
    """Trusted digests by absolute path; `check(path)` raises `UnpinnedFile` on a mismatch."""

    def __init__(self, digests: Mapping[str, str | None]) -> None:
        self._digests = dict(digests)
        self._verified: dict[str, _StatKey] = {}

    def check(self, path: Path) -> None:
        key = str(path)
        if key not in self._digests:
            raise UnpinnedFile(f"{path} is not among the files trusted for this session")
        try:
            st = os.stat(key)
        except OSError:
            st = None
        stat_key = (
            (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) if st else None
        )
        if stat_key is not None and self._verified.get(key) == stat_key:
            return
        if file_digest(key) != self._digests[key]:
            self._verified.pop(key, None)
            raise UnpinnedFile(
                f"{path} changed since the session started; it is not run "
                "(run `hookgate trust` to trust the new version for the next session)"
            )
        if stat_key is not None:
            self._verified[key] = stat_key
