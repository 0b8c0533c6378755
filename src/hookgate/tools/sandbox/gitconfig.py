"""What git's configuration names in the workspace, which git runs outside the sandbox.

A repository may keep its hooks in a folder of its own tree (`core.hooksPath =
scripts/git-hooks`, as many do to share them), include a tracked file into its
configuration (`include.path = ../.gitconfig-project`), or name a program of the tree
as a filter, a merge driver or an alias. The user's next `git commit` or `git status`
runs what those hold, unconfined: a command that rewrites one escapes the sandbox a
step later, as through `.git` itself. They are found here, by reading the configuration
files git reads for the repository a folder lies in (system, global, the repository's
own, and every file they include, conditions or not), as git's format reads them.

Read, not asked of `git config`: a process per command would cost more than the
reading, and the files are the user's own (the model writes none of them: `.git` is
read-only to it, and so is every included file found here).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from hookgate.hooks.files.yamlfile import read_regular

#: Keys whose value is a command line git runs (its first word may be a program of the
#: tree), by section and, for the sections of named drivers, by the key's last part;
#: and every alias (`!cmd` runs a shell command).
_COMMANDS: dict[str, set[str]] = {
    "core": {"fsmonitor", "editor", "pager", "sshcommand", "askpass"},
    "sequence": {"editor"},
    "diff": {"external", "textconv", "command"},
    "merge": {"driver"},
    "filter": {"clean", "smudge", "process"},
    "gpg": {"program"},
    "credential": {"helper"},
}
#: Included files followed at most this deep, as git does.
_MAX_DEPTH = 10
#: Bytes of one configuration file read at most.
_MAX_BYTES = 1024 * 1024
#: Each configuration file's entries `_interesting` found, by path, with the stat they
#: were read at.
_PARSED: dict[str, tuple[tuple[int, ...], tuple[tuple[str, str, str], ...]]] = {}
_SECTION = re.compile(r'\[\s*([\w.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)')
_ENTRY = re.compile(r"([A-Za-z][\w-]*)\s*(?:=(.*))?")


def named_by_git(roots: tuple[Path, ...], env: Mapping[str, str] = os.environ) -> list[Path]:
    """What git's configuration for the repository each of `roots` lies in names: the
    hooks folder, each included file, each program of a command key named by a path.
    Absolute and normalised, each once; none where there is no repository."""
    found: list[Path] = []
    for root in roots:
        repository = _repository(str(root))
        for name in () if repository is None else _named(*repository, env):
            if (path := Path(name)) not in found:
                found.append(path)
    return found


def _named(worktree: str, gitdir: str, env: Mapping[str, str]) -> Iterator[str]:
    for included, key, value in _entries(_config_files(gitdir, env), env):
        if included is not None:
            yield included
        elif key == "hookspath":
            yield _path(worktree, value, env)
        else:
            program = _first_word(value.removeprefix("!"))
            if "/" in program:  # else found in `PATH`, whose folders are kept already
                yield _path(worktree, program, env)


def _repository(root: str) -> tuple[str, str] | None:
    """The working tree holding `root` and its git directory (a `.git` file followed)."""
    folder = root
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            return folder, dot_git
        text = _read(dot_git)
        if text is not None:
            if text.startswith("gitdir:"):
                return folder, os.path.normpath(os.path.join(folder, text[7:].strip()))
            return None
        if folder == (folder := os.path.dirname(folder)):
            return None


def _config_files(gitdir: str, env: Mapping[str, str]) -> list[str]:
    """The files git reads, in its order (a later value wins)."""
    files: list[str] = []
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        files.append(env.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig"))
    home = env.get("HOME", "")
    if "GIT_CONFIG_GLOBAL" in env:
        files.append(env["GIT_CONFIG_GLOBAL"])
    else:
        xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files += [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    common = _read(os.path.join(gitdir, "commondir"))  # a worktree's: the config is there
    shared = os.path.normpath(os.path.join(gitdir, common.strip())) if common else gitdir
    files += [os.path.join(shared, "config"), os.path.join(gitdir, "config.worktree")]
    return files


def _entries(
    files: list[str], env: Mapping[str, str], depth: int = 0
) -> Iterator[tuple[str | None, str, str]]:
    """(None, key, value) for each entry of `files` that may name a file of the tree (the
    key in lower case), an included file's own `(path, "", "")` before its entries."""
    for file in files:
        for section, key, value in _interesting(file):
            if section in ("include", "includeif"):
                if depth < _MAX_DEPTH:
                    included = _path(os.path.dirname(file), value, env)
                    yield included, "", ""
                    yield from _entries([included], env, depth + 1)
            else:
                yield None, key, value


def _interesting(file: str) -> tuple[tuple[str, str, str], ...]:
    """The entries of `file` that may name a file of the tree (an include, the hooks
    folder, a command), their values as git reads them; none where it is no regular
    file. Read once while its stat stays the same (`Boundaries.of` asks at every tool
    call)."""
    try:
        status = os.stat(file)
    except OSError:
        return ()
    stamp = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    known = _PARSED.get(file)
    if known is not None and known[0] == stamp:
        return known[1]
    text = _read(file)
    found: list[tuple[str, str, str]] = []
    section = ""
    for line in _lines(text or ""):
        header = _SECTION.match(line)
        if header:
            section = header[1].lower().split(".")[0]
            line = header[3].strip(" \t")
            if not line:
                continue
        entry = _ENTRY.match(line)
        if entry and _names_a_file(section, key := entry[1].lower()):
            found.append((section, key, _value(entry[2] or "")))
    _PARSED[file] = (stamp, tuple(found))
    return _PARSED[file][1]


def _names_a_file(section: str, key: str) -> bool:
    if section in ("include", "includeif"):
        return key == "path"
    if section == "core" and key == "hookspath":
        return True
    return section == "alias" or key in _COMMANDS.get(section, ())


def _lines(text: str) -> Iterator[str]:
    """Logical lines (`\n` or `\r\n` ends one; an odd number of backslashes before it
    joins the next), with the spaces and tabs around them dropped."""
    pending = ""
    for raw in text.split("\n"):
        raw = raw.removesuffix("\r")
        trailing = len(raw) - len(raw.rstrip("\\"))
        if trailing % 2:
            pending += raw[:-1]
            continue
        yield (pending + raw).strip(" \t")
        pending = ""
    if pending:
        yield pending.strip(" \t")


def _value(raw: str) -> str:
    """A value as git reads it: quotes removed, escapes taken, a comment outside quotes
    dropped; outside quotes, whitespace at either end dropped and each run of it inside
    one space per character."""
    out: list[str] = []
    spaces = 0
    quoted = False
    chars = iter(raw)
    for char in chars:
        if not quoted and char in " \t":
            spaces += bool(out)
            continue
        if not quoted and char in "#;":
            break
        out += " " * spaces
        spaces = 0
        if char == "\\":
            escaped = next(chars, "")
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(escaped, escaped))
        elif char == '"':
            quoted = not quoted
        else:
            out.append(char)
    return "".join(out)


def _first_word(command: str) -> str:
    word = command.strip().split(maxsplit=1)
    return word[0].strip("'\"") if word else ""


def _path(base: str, value: str, env: Mapping[str, str]) -> str:
    """A path git reads from its configuration: `~/` is the home folder, a relative one
    is taken from `base`."""
    if value == "~" or value.startswith("~/"):
        value = env.get("HOME", "") + value[1:]
    return os.path.normpath(os.path.join(base, value))


def _read(path: str) -> str | None:
    """A regular file's text (at most `_MAX_BYTES`), or None."""
    data = read_regular(path, _MAX_BYTES)
    return None if data is None else data.decode("utf-8", "surrogateescape")  # names as bytes
