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

from hookgate.hooks.files.yamlfile import open_regular

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
_SECTION = re.compile(r'\[\s*([\w.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)')
_ENTRY = re.compile(r"([A-Za-z][\w-]*)\s*(?:=(.*))?")


def named_by_git(roots: tuple[Path, ...], env: Mapping[str, str] = os.environ) -> list[Path]:
    """What git's configuration for the repository each of `roots` lies in names: the
    hooks folder, each included file, each program of a command key named by a path.
    Absolute and normalised, each once; none where there is no repository."""
    found: list[Path] = []
    for root in roots:
        repository = _repository(root)
        for path in () if repository is None else _named(*repository, env):
            if path not in found:
                found.append(path)
    return found


def _named(worktree: Path, gitdir: Path, env: Mapping[str, str]) -> Iterator[Path]:
    for included, section, key, value in _entries(_config_files(gitdir, env), env):
        if included is not None:
            yield included
        elif section == "core" and key == "hookspath":
            yield _path(worktree, value, env)
        elif section == "alias" or key in _COMMANDS.get(section, ()):
            program = _first_word(value.removeprefix("!"))
            if "/" in program:  # else found in `PATH`, whose folders are kept already
                yield _path(worktree, program, env)


def _repository(root: Path) -> tuple[Path, Path] | None:
    """The working tree holding `root` and its git directory (a `.git` file followed)."""
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git
        text = _read(dot_git)
        if text is not None:
            if text.startswith("gitdir:"):
                return folder, Path(os.path.normpath(folder / text[7:].strip()))
            return None
    return None


def _config_files(gitdir: Path, env: Mapping[str, str]) -> list[Path]:
    """The files git reads, in its order (a later value wins)."""
    files: list[Path] = []
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        files.append(Path(env.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig")))
    home = env.get("HOME", "")
    if "GIT_CONFIG_GLOBAL" in env:
        files.append(Path(env["GIT_CONFIG_GLOBAL"]))
    else:
        xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files += [Path(xdg, "git", "config"), Path(home, ".gitconfig")]
    common = _read(gitdir / "commondir")  # a worktree's: the repository's config is there
    shared = Path(os.path.normpath(gitdir / common.strip())) if common else gitdir
    files += [shared / "config", gitdir / "config.worktree"]
    return files


def _entries(
    files: list[Path], env: Mapping[str, str], depth: int = 0
) -> Iterator[tuple[Path | None, str, str, str]]:
    """(None, section, key, value) for each entry of `files`, an included file's own
    `(path, "", "", "")` before its entries; sections and keys in lower case."""
    for file in files:
        text = _read(file)
        if text is None:
            continue
        section = ""
        for line in _lines(text):
            header = _SECTION.match(line)
            if header:
                section = header[1].lower().split(".")[0]
                line = header[3].strip(" \t")
                if not line:
                    continue
            entry = _ENTRY.match(line)
            if not entry:
                continue
            key, value = entry[1].lower(), _value(entry[2] or "")
            if section in ("include", "includeif") and key == "path" and depth < _MAX_DEPTH:
                included = _path(file.parent, value, env)
                yield included, "", "", ""
                yield from _entries([included], env, depth + 1)
            else:
                yield None, section, key, value


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


def _path(base: Path, value: str, env: Mapping[str, str]) -> Path:
    """A path git reads from its configuration: `~/` is the home folder, a relative one
    is taken from `base`."""
    if value == "~" or value.startswith("~/"):
        value = env.get("HOME", "") + value[1:]
    return Path(os.path.normpath(base / value))


def _read(path: Path) -> str | None:
    """A regular file's text (at most `_MAX_BYTES`), or None."""
    try:
        file = open_regular(path)
    except OSError:
        return None
    if file is None:
        return None
    with file:
        return file.read(_MAX_BYTES).decode("utf-8", "surrogateescape")  # names as bytes
