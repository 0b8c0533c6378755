"""Where the model's tools may reach: one table, read by the file tools and the sandbox.

`Boundaries.of(ctx)` derives it from a `ToolContext`. The file tools ask it before they
open a path (`tools/paths.py`); `bwrap.confine` turns the same table into the mounts of
a shell command's sandbox. Every path in it is resolved (symlinks followed).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from hookgate.hooks.files.yamlfile import read_regular
from hookgate.hooks.records import NamedTuple
from hookgate.tools.sandbox.gitconfig import named_by_git
from hookgate.tools.sandbox.settings import Mode, SandboxSettings

if TYPE_CHECKING:
    from hookgate.tools.base import ToolContext

#: What programs outside the sandbox read from a folder and act on, unasked: a write
#: there runs the model's code unconfined one step later. git runs what a repository's
#: config and hooks name at the user's next `git status` (and a `.git` or `commondir`
#: of the model's own would do as well: the whole repository, then; what its config
#: names in the tree is `gitconfig.named_by_git`'s), git-lfs obeys `.lfsconfig`, and
#: the hook managers git's hooks start run their own configuration at the next commit
#: (husky's `core.hooksPath`, its `_/` dispatcher ignored by git; pre-commit;
#: lefthook); editors run a project's tasks and language servers (a dev container's
#: `initializeCommand` on the host, vi's `exrc`), other agent CLIs its hooks, MCP
#: servers, plugins and lint or test commands, version managers their hooks on `cd`,
#: shells their start-up files. Each is never written where it lies at the top of a
#: writable folder (a name with a `/`: that far down).
RUN_OUTSIDE = frozenset(
    {".git", ".gitmodules", ".gitconfig", ".lfsconfig",
     ".husky", ".pre-commit-config.yaml", ".pre-commit-config.yml",
     *(f"{dot}lefthook{local}.{ext}" for dot in ("", ".") for local in ("", "-local")
       for ext in ("yml", "yaml", "toml", "json", "jsonc")),
     *(f".config/lefthook{local}.{ext}" for local in ("", "-local")
       for ext in ("yml", "yaml", "toml", "json", "jsonc")),
     ".lefthook", ".lefthook-local",
     ".vscode", ".idea", ".zed", ".devcontainer", ".devcontainer.json",
     ".exrc", ".vimrc", ".nvimrc", ".nvim.lua",
     ".claude", ".gemini", ".codex", ".cursor", ".mcp.json", ".windsurf", ".kiro",
     ".continue", ".opencode", "opencode.json", "opencode.jsonc", ".aider.conf.yml",
     "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".mise",
     ".config/mise.toml", ".config/mise",
     ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
     ".zshrc", ".zshenv", ".zprofile", ".zlogin"}
)  # fmt: skip
#: What the model is told when such an entry is kept from it.
RUNS_OUTSIDE = (
    "programs outside the sandbox run what it holds (a hook, git, an editor, another "
    "agent CLI, a shell)"
)


class Boundaries(NamedTuple):
    """The workspace, what may be written, what is hidden and what is never written."""

    project_dir: Path
    workspace: tuple[Path, ...]
    """The project and `workspace.dirs`: the file tools reach them without consent."""
    writable: tuple[Path, ...]
    """Where a confined command (and, with the sandbox on, a file tool) may write."""
    hidden: tuple[Path, ...]
    """Neither read nor written by any tool: `$HOOKGATE_HOME`, every project's sessions;
    with the sandbox on, `sandbox.hidden` too (the user's credentials by default)."""
    protected: frozenset[Path]
    """Never written, even inside `writable`: the agent file's trust closure (a hook's
    folder with everything in it)."""
    sandbox: SandboxSettings
    private_tmp: Path | None = None
    """The session's own temporary directory (`TMPDIR` of its commands), when confined."""
    guarded: tuple[Path, ...] = ()
    """The folders whose `RUN_OUTSIDE` entries are never written: the workspace and the
    writable dirs."""
    given: tuple[Path, ...] = ()
    """The `RUN_OUTSIDE` entries a `writable:` dir names, which are written after all."""
    runs_from: frozenset[Path] = frozenset()
    """Never written either: what hookgate's hooks and servers run from (`ToolContext`)."""
    by_git: tuple[Path, ...] = ()
    """What git's configuration names in a guarded folder, which git runs: the hooks
    folder (`core.hooksPath`), an included file, a filter's or an alias's program
    (`gitconfig.named_by_git`). Never written, like a `RUN_OUTSIDE` entry."""

    @classmethod
    def of(cls, ctx: ToolContext) -> Boundaries:
        project = ctx.project_dir.resolve()
        workspace = (project, *ctx.workspace_dirs)
        sandbox = ctx.sandbox
        writable = workspace if sandbox.mode is not Mode.READ_ONLY else ()
        if sandbox.ceiling is not None:
            writable = _intersection(writable, sandbox.ceiling)
            extra = _intersection(sandbox.writable, sandbox.ceiling)
        else:
            extra = sandbox.writable
        if ctx.private_tmp is not None:
            extra = (*extra, ctx.private_tmp)
        hidden = () if ctx.hookgate_home is None else (ctx.hookgate_home,)
        if sandbox.on:
            hidden = (*hidden, *sandbox.hidden_paths())
        guarded = outermost((*workspace, *writable, *sandbox.writable, *(sandbox.ceiling or ())))
        by_git = tuple(path for path in named_by_git(guarded) if within(path, guarded))
        given = _run_outside_among(sandbox.writable, guarded, by_git)
        if sandbox.ceiling is not None:  # given back only where the asker gave it too
            asker = _run_outside_among(sandbox.ceiling, guarded, by_git)
            given = tuple(path for path in given if path in asker)
        return cls(
            project, workspace, outermost((*writable, *extra)), hidden, ctx.protected_files,
            sandbox, ctx.private_tmp, guarded, given, _below(ctx.runs_from, project), by_git,
        )  # fmt: skip

    def floor(self) -> tuple[Path, ...]:
        """What an agent this one asks may write at most: these boundaries, less the
        private tmp (the asked agent gets one of its own), and what `writable:` gave back
        of `RUN_OUTSIDE`, which the asked agent may take back too."""
        return (*(d for d in self.writable if d != self.private_tmp), *self.given)

    def kept(self) -> tuple[Path, ...]:
        """What an agent this one asks must never write either: what this session's
        hooks and servers run, outside any sandbox (`SandboxSettings.kept`)."""
        return outermost(tuple(sorted({*self.protected, *self.runs_from})))

    def hides(self, path: Path) -> bool:
        return within(path, self.hidden)

    def protects(self, path: Path) -> bool:
        """Whether `path` is a file of the closure or lies in a folder of it."""
        return within(path, tuple(self.protected))

    def runs_outside(self, path: Path) -> bool:
        """Whether `path` lies in a folder that programs outside the sandbox run from, or
        is, or lies in, a `RUN_OUTSIDE` entry of a guarded folder, or a `.git` at any
        depth in one (a submodule's, a vendored repository's), that no `writable:` dir
        gives back."""
        if within(path, tuple(self.runs_from)):
            return True
        if any(under(path, named) for named in self.by_git if named not in self.given):
            return True
        for root in self.guarded:
            if path != root and under(path, root):
                parts = path.relative_to(root).parts
                if root / parts[0] in self.given:
                    return False
                return (
                    parts[0] in RUN_OUTSIDE or "/".join(parts[:2]) in RUN_OUTSIDE or ".git" in parts
                )
        return False

    def present_outside(self) -> list[Path]:
        """What programs outside the sandbox run that exists: the `RUN_OUTSIDE` entries
        of the guarded folders (given ones aside), the folders `runs_from`."""
        entries = [*self._guarded_entries(), *sorted(self.runs_from)]
        return [path for path in entries if path.exists()]

    def absent_outside(self) -> list[Path]:
        """The `RUN_OUTSIDE` entries of the guarded folders that are not there (given
        ones aside), and the folders `runs_from` that are not there yet in a writable
        dir (a `PATH` entry's `bin/`, a `node_modules` before `npm install`): no mount
        keeps a command from making one (`set_aside`); the counterpart of
        `present_outside`."""
        made_here = [folder for folder in sorted(self.runs_from) if within(folder, self.writable)]
        entries = [*self._guarded_entries(), *made_here]
        return [entry for entry in entries if not os.path.lexists(entry)]

    def _guarded_entries(self) -> list[Path]:
        """The `RUN_OUTSIDE` entries of each guarded folder, the `.git` of each
        submodule its `.gitmodules` lists and what git's configuration names, given
        ones aside."""
        entries = [root / name for root in self.guarded for name in sorted(RUN_OUTSIDE)]
        entries += [git for root in self.guarded for git in submodules(root)]
        entries += self.by_git
        return [entry for entry in entries if entry not in self.given]

    def may_write(self, path: Path) -> bool:
        """Whether a write to `path` stays inside the boundaries (consent aside)."""
        if self.hides(path) or self.protects(path) or self.runs_outside(path):
            return False
        return not self.sandbox.on or within(path, self.writable)


def submodules(root: Path) -> list[Path]:
    """The `.git` of each submodule `root/.gitmodules` lists (`path = sub`): a file that
    names the submodule's gitdir, whose config and hooks the user's next `git status`
    in the repository above runs. Read as git's own file format is, line by line; a
    file that is no regular one, or a path outside `root`, names none."""
    data = read_regular(root / ".gitmodules", _GITMODULES_BYTES)
    if data is None:
        return []
    text = data.decode("utf-8", "replace")
    found: list[Path] = []
    for value in _SUBMODULE_PATH.findall(text):
        folder = Path(os.path.normpath(root / value.strip().strip('"')))
        if folder != root and under(folder, root):
            found.append(folder / ".git")
    return found


#: A submodule's `path = …` line in `.gitmodules`.
_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE)
#: Bytes of `.gitmodules` read at most: a few lines a submodule.
_GITMODULES_BYTES = 1024 * 1024


def set_aside(paths: list[Path]) -> list[tuple[Path, Path | OSError]]:
    """Each of `paths` that is there now, with the fresh name beside it it was renamed
    to (or why it could not be): what a confined command made that programs outside
    the sandbox would run (`absent_outside`, taken before it), moved out of their way
    and kept for the user."""
    moved: list[tuple[Path, Path | OSError]] = []
    for path in paths:
        if os.path.lexists(path):
            aside = path.with_name(f"{path.name}.hookgate-set-aside-{os.urandom(4).hex()}")
            try:
                os.rename(path, aside)
            except OSError as exc:
                moved.append((path, exc))
            else:
                moved.append((path, aside))
    return moved


def within(path: Path, roots: tuple[Path, ...]) -> bool:
    """Whether `path` is one of `roots` or lies under one (both resolved)."""
    return any(under(path, root) for root in roots)


def under(path: Path, root: Path) -> bool:
    """Whether `path` is `root` or lies under it, both absolute and normalised: compared
    as strings (`is_relative_to` parses both anew each time, and a command's mounts ask
    it hundreds of times)."""
    name, top = str(path), str(root)
    return name == top or name.startswith(top if top.endswith(os.sep) else top + os.sep)


def _intersection(dirs: tuple[Path, ...], ceiling: tuple[Path, ...]) -> tuple[Path, ...]:
    """The trees both `dirs` and `ceiling` cover: each pair's inner one, where nested."""
    both = [d for d in dirs for c in ceiling if under(d, c)]
    both += [c for c in ceiling for d in dirs if under(c, d)]
    return outermost(tuple(dict.fromkeys(both)))


def _below(folders: frozenset[Path], project: Path) -> frozenset[Path]:
    """`folders` but those holding the project (a `PATH` entry of the project itself, or
    of a folder above it): kept whole, they would leave the model nothing to write."""
    return frozenset(folder for folder in folders if not under(project, folder))


def _run_outside_among(
    dirs: tuple[Path, ...], guarded: tuple[Path, ...], by_git: tuple[Path, ...]
) -> tuple[Path, ...]:
    """Those of `dirs` that are a `RUN_OUTSIDE` entry of a guarded folder, or named by git."""
    return tuple(d for d in dirs if (d.name in RUN_OUTSIDE and d.parent in guarded) or d in by_git)


def outermost(dirs: tuple[Path, ...]) -> tuple[Path, ...]:
    """`dirs` without those inside another, in their order: one mount each is enough."""
    kept: list[Path] = []
    for path in dirs:
        if path not in kept and not any(under(path, o) and path != o for o in dirs):
            kept.append(path)
    return tuple(kept)


def private_directory(prefix: str) -> Path:
    """Where a session's private temporary directory goes: a fresh name in the system's
    temporary directory, made by `ensure_private` at its first use.

    Not `tempfile.mkdtemp`: it imports `shutil` and `random`, a few ms of every start,
    and most sessions never run a command.
    """
    base = os.environ.get("TMPDIR") or "/tmp"
    return Path(os.path.realpath(base), f"{prefix}-{os.urandom(8).hex()}")


def ensure_private(path: Path) -> None:
    """Make `path` a directory only its owner reaches, unless this process made it so.

    Raises `OSError` where something else stands there (a link, another's directory).
    """
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        info = path.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise FileExistsError(f"{path} exists and is not this session's own") from None
