"""Modules the model could plant where a hook's Python imports first: pinned absent.

Python puts a script's folder (`python3 guard.py`), or the directory it runs in
(`python3 -m`, `-c`, `-`), first on `sys.path`. Where that is the project's own folder,
which the model writes, a `selectors.py` or `re.py` it makes there is what every
`import re` of the hook's, and of the standard library's modules it imports in turn,
runs: outside the sandbox. Trust pins the names the hook's own files import; the
standard library's imports are not read (they differ between versions). So trust pins
one more entry per such folder, `folder/SHADOWS`, whose digest is the list of the
folder's entries that would shadow a module the interpreter could import: the standard
library's, and the top-level ones of the installed packages (`guarded_names`). A model
that writes `main.py` changes nothing; one that writes `re.py`, or an `__init__.py` into
an `email/` folder, makes the hook refused, naming the entry. What was there when the
user trusted the project is pinned with its content (`whatruns`).
"""

from __future__ import annotations

import functools
import os
import site
import sys
from pathlib import Path

from hookgate.hooks.files.digest import sha256

#: The entry trust pins in a folder first on a hook's `sys.path`: no file of that name
#: is looked for; its digest is the folder's shadowing entries (`shadows_digest`).
SHADOWS = "(modules shadowing Python's)"
#: Standard modules no other module imports: a project's own `test/` is no shadow.
_NEVER_IMPORTED = frozenset({"test", "idlelib", "turtledemo", "this", "antigravity", "__main__"})
#: Endings of a file Python imports a module from (the part after the module's name).
_MODULE_ENDINGS = (".py", ".pyc", ".pyw")
#: Where a distribution's Python keeps packages its own `python3` imports (globs).
_SYSTEM_SITES = ("/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages")


def module_name(name: str, *, folder: bool) -> str | None:
    """The module Python would import from a folder's entry `name`, or None: `re.py`,
    `re.pyc`, `re.cpython-311-x86_64-linux-gnu.so` and a folder `re` are `re`'s."""
    if folder:
        return name if name.isidentifier() else None
    stem, dot, rest = name.partition(".")
    if not dot or not stem.isidentifier():
        return None
    ending = "." + rest
    return stem if ending in _MODULE_ENDINGS or ending.endswith((".so", ".pyd")) else None


def shadowing(folder: Path) -> list[Path]:
    """The entries of `folder` that would shadow a module the interpreter could import
    (`guarded_names`): a module's file, or a package — a folder with an `__init__`
    (one without is a namespace package, which any other place of the name outranks)."""
    names = guarded_names(folder)
    found: list[Path] = []
    try:
        with os.scandir(folder) as listing:
            entries = [(entry.name, entry.is_dir()) for entry in listing]
    except OSError:
        return found
    for name, is_dir in entries:
        module = module_name(name, folder=is_dir)
        if module is None or module not in names:
            continue
        if not is_dir:
            found.append(folder / name)
        else:
            found.extend(_package_inits(folder / name))
    return sorted(found)


def shadows_digest(folder: Path) -> str:
    """The digest of `folder`'s shadowing entries (`shadowing`): their names alone (each
    present one is pinned with its content besides)."""
    names = [str(path.relative_to(folder)) for path in shadowing(folder)]
    return sha256(("shadows\n" + "\n".join(names)).encode()).hexdigest()


def watched(folder: Path) -> list[str]:
    """`folder` and the folders in it named like a module: an `__init__.py` added to one
    changes what it shadows but not `folder`'s own `stat` (`FilePins` stats them all)."""
    paths = [str(folder)]
    try:
        with os.scandir(folder) as listing:
            paths += [
                entry.path for entry in listing if entry.is_dir() and entry.name.isidentifier()
            ]
    except OSError:
        pass
    return paths


def _package_inits(package: Path) -> list[Path]:
    try:
        with os.scandir(package) as listing:
            names = [entry.name for entry in listing]
    except OSError:
        return []
    return [package / name for name in names if module_name(name, folder=False) == "__init__"]


def guarded_names(folder: Path) -> frozenset[str]:
    """The modules a hook's Python could import that a file in `folder` would shadow:
    the standard library's (`test` and its like aside) and the top-level modules of the
    installed packages: hookgate's interpreter's, the distribution's Python's, and those
    of a virtual environment in `folder` (`.venv`, by its `pyvenv.cfg`)."""
    sites = [*_interpreter_sites(), *_venv_sites(folder)]
    return frozenset(sys.stdlib_module_names - _NEVER_IMPORTED).union(*map(_top_level, sites))


@functools.cache
def _interpreter_sites() -> tuple[str, ...]:
    """hookgate's interpreter's package folders, its base interpreter's (a `python3` on
    `PATH` is often that one) and the distribution Python's."""
    import glob

    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = os.path.join(sys.base_prefix, "lib", version, "site-packages")
    system = [path for pattern in _SYSTEM_SITES for path in sorted(glob.glob(pattern))]
    found = [*site.getsitepackages(), site.getusersitepackages(), base, *system]
    return tuple(dict.fromkeys(found))


def _venv_sites(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as listing:
            venvs = [
                e.path for e in listing if e.is_dir() and os.path.isfile(f"{e.path}/pyvenv.cfg")
            ]
    except OSError:
        return []
    sites: list[str] = []
    for venv in venvs:
        lib = os.path.join(venv, "lib")
        try:
            versions = [name for name in os.listdir(lib) if name.startswith("python")]
        except OSError:
            continue
        sites += [os.path.join(lib, version, "site-packages") for version in versions]
    return sites


@functools.cache
def _top_level(site_dir: str) -> frozenset[str]:
    """The modules a package folder holds, by their files' and folders' names."""
    try:
        with os.scandir(site_dir) as listing:
            entries = [(entry.name, entry.is_dir()) for entry in listing]
    except OSError:
        return frozenset()
    names = (module_name(name, folder=is_dir) for name, is_dir in entries)
    return frozenset(name for name in names if name is not None)
