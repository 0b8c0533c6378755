"""The folders programs outside the sandbox run from, which the model must not write.

A hook that runs `.venv/bin/python`, `npx eslint` or a Node.js script runs what a
package manager's folder holds (the interpreter's imports and `.pth` files, a
package's program, the packages a script requires): `environments`. A hook or an MCP
server started by name runs what a `PATH` directory holds, and hookgate itself runs
from its own virtual environment: `found_by_name`. Trust does not pin them (an `npm
install` would untrust the project), but the model's tools must not write them: what
they hold runs outside the sandbox. A module of its own, importing nothing of
hookgate's: each session asks it at its start, the resolver when it reads a hook
(`whatruns`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

#: Folders a package manager fills: a file a hook runs there pins itself alone.
PACKAGE_DIRS = frozenset({"node_modules", "site-packages", "dist-packages"})
#: A Node.js script's: it finds the packages it requires in `node_modules`, in its
#: folder and in each above it.
NODE_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")


def environments(files: Iterable[Path], root: Path) -> set[Path]:
    """The folders inside `root` that a package manager fills and that `files` (a
    closure's) run from: the environment holding one of them (`environment_of`), the
    `node_modules` a Node.js script or a `package.json` finds its packages in (its
    folder's and each one's above it), present or not: one the model makes later is
    searched too (`require('picocolors')` tolerating its absence would run what it
    wrote there), so the sandbox sets an absent one aside. Worked on strings: a hook folder's thousand
    files are a thousand `Path`s, whose hashing alone would cost milliseconds."""
    folders: dict[str, bool] = {}  # each folder once, and whether a Node.js file is in it
    for path in files:
        folder, _, name = str(path).rpartition(os.sep)
        node = name.endswith(NODE_SUFFIXES) or name == "package.json"
        folders[folder] = folders.get(folder, False) or node
    seen: dict[str, bool] = {}
    found: set[Path] = set()
    for folder, node in folders.items():
        inside = _inside(folder, str(root))
        if (environment := _environment(inside, seen)) is not None:
            found.add(Path(environment))
        if node:
            found.update(Path(os.path.join(above, "node_modules")) for above in inside)
    return found


def found_by_name(environ: Mapping[str, str]) -> set[Path]:
    """Where the programs hookgate starts by name come from: each `PATH` directory, or
    the environment holding it (`.venv/bin` on `PATH`: a hook's `python3` is `.venv`'s,
    with its packages and `.pth` files), and the virtual environment hookgate runs in,
    its own code. A relative entry (`.`, an empty one) names no one folder: left out."""
    seen: dict[str, bool] = {}
    found: set[Path] = set()
    if sys.prefix != sys.base_prefix:
        found.add(Path(sys.prefix))
    for entry in environ.get("PATH", "").split(os.pathsep):
        if os.path.isabs(entry):
            folder = os.path.realpath(entry)
            found.add(Path(_environment(_inside(folder, os.sep), seen) or folder))
    return found


def environment_of(path: Path, root: Path) -> Path | None:
    """The outermost folder inside `root` holding `path` that a package manager fills:
    a virtual environment (`.venv`, by its `pyvenv.cfg`: the interpreter's imports and
    `.pth` files come from there), `node_modules`, `site-packages`."""
    environment = _environment(_inside(os.path.dirname(path), str(root)), {})
    return None if environment is None else Path(environment)


def _environment(inside: list[str], seen: dict[str, bool]) -> str | None:
    """The outermost environment among `inside` (`_inside`'s), the root aside: the
    project itself is no package's."""
    outermost = None
    for folder in inside[:-1]:
        if os.path.basename(folder) in PACKAGE_DIRS or _exists(f"{folder}/pyvenv.cfg", seen):
            outermost = folder
    return outermost


def _inside(folder: str, root: str) -> list[str]:
    """`folder` and the folders above it, up to `root`; none where it is not inside."""
    found: list[str] = []
    while folder == root or folder.startswith(root.rstrip(os.sep) + os.sep):
        found.append(folder)
        if folder == root:
            break
        folder = os.path.dirname(folder)
    return found


def _exists(path: str, seen: dict[str, bool]) -> bool:
    if path not in seen:
        seen[path] = os.path.exists(path)
    return seen[path]
