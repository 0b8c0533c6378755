"""Where the file tools reach: one normalisation of every path, and the refusals.

A path is made absolute from the project directory, with `..`, `//` and `./` gone and
symlinks resolved, before a permission rule judges it and before a tool opens it, so
both see the same file. Where it may go is the sandbox's table (`sandbox.Boundaries`),
the one the shell's sandbox enforces: the workspace (project directory plus
`workspace.dirs`) is reached freely, elsewhere asks for consent; `$HOOKGATE_HOME` is
never reached, protected files never written, and with the sandbox on no file is
written outside its writable dirs.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hookgate.errors import ToolError
from hookgate.tools.base import ToolContext
from hookgate.tools.sandbox.boundaries import (
    RUN_OUTSIDE,
    RUNS_OUTSIDE,
    Boundaries,
    under,
    within,
)

__all__ = ["within"]  # the sandbox's, for the tools that walk a tree

#: The argument holding the path each file tool opens or walks.
PATH_ARGUMENT = {
    "read_file": "path",
    "write_file": "path",
    "edit_file": "path",
    "list_files": "path",
    "grep": "path",
}
#: The tools whose permission rules (`write_file(notes/*)`) are globs on that path.
PATH_RULE_TOOLS = frozenset({"read_file", "write_file", "edit_file"})


def normalise_path(raw: str, base: Path) -> Path:
    """`raw` made absolute from `base`, `..`, `//` and `./` removed, symlinks resolved.

    `..` is taken after the symlink before it, as the kernel does: the result is the
    file an `open` of `raw` would reach. Raises `ToolError` for an empty path or a NUL.
    """
    if not raw:
        raise ToolError("argument 'path' must not be empty")
    if "\0" in raw:
        raise ToolError("argument 'path' must not contain a NUL character")
    # realpath keeps a leading '//' (POSIX leaves its meaning open); Linux reads it as '/'.
    joined = "/" + os.path.join(base, raw).lstrip("/")
    return Path(os.path.realpath(joined))


def path_rule_matches(
    pattern: str, raw: object, project_dir: Path, *, denying: bool = False
) -> bool:
    """Whether a path tool's rule glob `pattern` covers the path `raw` the model gave.

    Both are made absolute from the project directory, whose own name is never a glob
    (`proj[1]` is itself): a relative pattern means a place in the project. An allow
    rule covers the file `raw` reaches (symlinks and `..` resolved), judged against the
    pattern with its literal leading folders resolved the same way: `notes/*` does not
    cover `notes/link` pointing elsewhere, and `secrets/*` covers `secrets/key` where
    `secrets` links to `vault`. A deny rule (`denying`) matches that, or the path as
    written against the pattern as written (`..` taken lexically), so it refuses every
    name of a file it names.
    """
    if not isinstance(raw, str):
        return False
    base = project_dir.resolve()
    try:
        reached = str(normalise_path(raw, base))
    except ToolError:
        return False
    resolved_rule = _anchored_rule(pattern, base, resolve=True)
    if not denying:
        return fnmatch.fnmatchcase(reached, resolved_rule)
    rules = (resolved_rule, _anchored_rule(pattern, base, resolve=False))
    paths = (reached, _lexical(raw, base))
    return any(fnmatch.fnmatchcase(path, rule) for path in paths for rule in rules)


#: A path component a glob reads as a pattern, not as itself.
_GLOB_MAGIC = re.compile(r"[*?\[]")


def _anchored_rule(pattern: str, base: Path, *, resolve: bool) -> str:
    """`pattern` as an absolute glob: its leading literal folders joined to `base`,
    escaped so no name in them is read as a glob, and with `resolve` symlinks resolved."""
    parts = os.path.normpath(pattern).split("/")
    literal = next((i for i, part in enumerate(parts) if _GLOB_MAGIC.search(part)), len(parts))
    head = "/".join(parts[:literal]) or ("/" if pattern.startswith("/") else ".")
    anchor = _lexical(head, base)
    if resolve and "\0" not in head:  # no file has a NUL in its name: nothing to resolve
        anchor = str(normalise_path(head, base))
    rest = "/".join(parts[literal:])
    escaped = _GLOB_MAGIC.sub(r"[\g<0>]", anchor)  # `glob.escape`'s way, without `glob`
    return escaped + ("/" + rest if rest and anchor != "/" else rest)


def _lexical(raw: str, base: Path) -> str:
    """`raw` made absolute from `base` with `.`, `..` and `//` taken as written."""
    return "/" + os.path.normpath(os.path.join(base, raw)).lstrip("/")


def workspace_roots(ctx: ToolContext) -> tuple[Path, ...]:
    """The directories the file tools reach without asking: the project, then the extra ones."""
    return Boundaries.of(ctx).workspace


def leaves_workspace(tool: str, arguments: Mapping[str, Any], ctx: ToolContext) -> bool:
    """Whether a file tool call reaches outside the workspace (it then needs consent).

    A path that cannot be normalised is not outside: the tool refuses it itself.
    """
    name = PATH_ARGUMENT.get(tool)
    raw = arguments.get(name, ".") if name is not None else None
    if not isinstance(raw, str):
        return False
    try:
        path = normalise_path(raw, ctx.project_dir)
    except ToolError:
        return False
    return not within(path, workspace_roots(ctx))


def open_path(raw: str, ctx: ToolContext, *, writing: bool = False) -> Path:
    """The normalised path a file tool opens; raises `ToolError` where it must not go.

    `$HOOKGATE_HOME` (sessions of every project) is never reached, reads included;
    a protected file (the agent file and what it trusts) is never written, nor what
    programs outside the sandbox run (`.git`, `.vscode`, …); with the sandbox on,
    nothing outside its writable dirs is written, as for the shell.
    """
    path = normalise_path(raw, ctx.project_dir)
    bounds = Boundaries.of(ctx)
    if bounds.hides(path):
        home = ctx.hookgate_home
        if home is not None and within(path, (home,)):
            raise ToolError(
                f"[denied: {raw!r} is protected: it is inside hookgate's own data directory "
                f"({home}), which no file tool reaches]"
            )
        raise ToolError(
            f"[denied: {raw!r} is hidden from the model (sandbox.hidden: the user's "
            "credentials by default); neither a file tool nor a command reads it]"
        )
    if writing and bounds.protects(path):
        raise ToolError(
            f"[denied: {display_path(path, ctx)} is protected: the agent file or a file it "
            "trusts, which only its owner changes (and then trusts anew)]"
        )
    if writing and bounds.runs_outside(path):
        shown = display_path(path, ctx)
        raise ToolError(
            f"[denied: {shown} is protected: {RUNS_OUTSIDE}, so only the user changes it"
            f"{_given(path, bounds, ctx)}]"
        )
    if writing and not bounds.may_write(path):
        shown = ", ".join(str(d) for d in bounds.writable) or "none"
        raise ToolError(
            f"[denied: {display_path(path, ctx)} is outside the sandbox's writable "
            f"directories ({shown}); sandbox mode {bounds.sandbox.mode.value}]"
        )
    return path


def _given(path: Path, bounds: Boundaries, ctx: ToolContext) -> str:
    """How the agent file gives the folder holding `path` back to the model, if it can."""
    root = next((root for root in bounds.guarded if under(path, root)), None)
    if root is None or within(path, tuple(bounds.runs_from)):
        return ""
    entry = root / path.relative_to(root).parts[0]
    if entry.name not in RUN_OUTSIDE or not entry.is_dir():
        return ""  # a `.git` further down, or a file: nothing `writable:` can name
    return f"; `sandbox: {{writable: [{display_path(entry, ctx)}]}}` gives it back"


def open_resolved(path: Path, flags: int, *, make_parents: bool = False) -> int:
    """A descriptor of `path` (absolute, resolved: `open_path`'s), opened without
    following a symlink anywhere on the way: each folder from `/` down, then the file.

    `open_path` judged the resolved path; a folder swapped for a symlink since (by a
    command that runs beside this tool: a team member's, a sandboxed MCP server's)
    would otherwise lead the open elsewhere, into `.git/hooks` or `$HOOKGATE_HOME`.
    Here it is `ELOOP` or `ENOTDIR` instead. `make_parents`: missing folders are made
    on the way. Opened non-blocking (a named pipe never holds the worker); raises
    `OSError`.
    """
    folder = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in path.parts[1:-1]:
            if make_parents:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=folder)
            below = os.open(part, _NO_FOLLOW | os.O_PATH | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = below
        return os.open(path.name, flags | _NO_FOLLOW | os.O_NONBLOCK, 0o666, dir_fd=folder)
    finally:
        os.close(folder)


_NO_FOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def refused(path: Path, ctx: ToolContext) -> bool:
    """Whether `path` lies in `$HOOKGATE_HOME` or `sandbox.hidden`, which no file tool
    reaches."""
    return Boundaries.of(ctx).hides(path)


def display_path(path: Path, ctx: ToolContext) -> str:
    """`path` as tools show it: relative to the project directory when inside it."""
    for base in (ctx.project_dir, ctx.project_dir.resolve()):
        if path.is_relative_to(base):
            return str(path.relative_to(base))
    return str(path)
