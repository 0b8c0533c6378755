"""The folders a package manager fills that a hook runs from: `environments`.

A hook that runs `.venv/bin/python`, `npx eslint` or a Node.js script runs what such a
folder holds (the interpreter's imports and `.pth` files, a package's program, the
packages a script requires). Trust does not pin them whole (an `npm install` would
untrust the project), but the model's tools must not write them: the hook runs what
they hold outside the sandbox. A module of its own, importing nothing: the session
asks it at every start (`TrustedAgent.protected_files`), the resolver when it reads a
hook (`whatruns`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

#: Folders a package manager fills: a file a hook runs there pins itself alone.
PACKAGE_DIRS = frozenset({"node_modules", "site-packages", "dist-packages"})
#: A Node.js script's: it finds the packages it requires in `node_modules`, in its
#: folder and in each above it.
NODE_SUFFIXES = frozenset({".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"})


def environments(files: Iterable[Path], root: Path) -> set[Path]:
    """The folders inside `root` that a package manager fills and that `files` (a
    closure's) run from: the environment holding one of them (`environment_of`), the
    `node_modules` a Node.js script or a `package.json` finds its packages in (its
    folder's and each one's above it)."""
    found: set[Path] = set()
    seen: dict[Path, bool] = {}  # each folder looked at once: a hook folder's files share them
    for path in files:
        if (environment := environment_of(path, root, seen)) is not None:
            found.add(environment)
        if path.suffix in NODE_SUFFIXES or path.name == "package.json":
            found.update(
                folder / "node_modules"
                for folder in _inside(path, root)
                if _holds(folder, "node_modules", seen)
            )
    return found


def environment_of(path: Path, root: Path, seen: dict[Path, bool] | None = None) -> Path | None:
    """The outermost folder inside `root` holding `path` that a package manager fills:
    a virtual environment (`.venv`, by its `pyvenv.cfg`: the interpreter's imports and
    `.pth` files come from there), `node_modules`, `site-packages`."""
    seen = {} if seen is None else seen
    outermost = None
    for folder in _inside(path, root)[:-1]:  # the root itself is the project, not a package's
        if folder.name in PACKAGE_DIRS or _holds(folder, "pyvenv.cfg", seen):
            outermost = folder
    return outermost


def _inside(path: Path, root: Path) -> list[Path]:
    """The folders holding `path`, innermost first, up to `root`."""
    return [folder for folder in path.parents if folder.is_relative_to(root)]


def _holds(folder: Path, name: str, seen: dict[Path, bool]) -> bool:
    if folder / name not in seen:
        seen[folder / name] = (folder / name).exists()
    return seen[folder / name]
