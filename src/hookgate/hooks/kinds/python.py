"""Importing a `python:` hook (`package.module:function`) without importing the project.

A module whose top-level name is a file or package next to the config file is loaded
from that directory only, under a private name, so it can shadow nothing (a project's
`json.py` never becomes everyone's `json`); any other module comes from `sys.path` as
usual. `whatruns.python_hook_files` names the files such a module is made of, for trust: a
local package whole, since any of its modules may be imported when the hook runs.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hookgate.hooks.errors import ConfigError
from hookgate.hooks.files.digest import sha256
from hookgate.hooks.files.yamlfile import Where, describe

HookCallable = Callable[[Mapping[str, Any]], Any]
#: Held while a local module runs its top level: a second thread (one engine per request
#: in `hookgate serve`) must wait for it, not take the half-made module from sys.modules.
_LOADING = threading.RLock()


def split_reference(reference: str) -> tuple[str, str]:
    """`package.module:function` → (`package.module`, `function`); empty parts if malformed."""
    module_name, _, attribute = reference.partition(":")
    return module_name, attribute


def local_module_files(module_name: str, base_dir: Path) -> dict[Path, bool]:
    """The files that decide where `module_name` comes from, next to `base_dir`, and
    whether each exists: both places its top-level name could be, then the package
    chain down to the module when it is local."""
    parts = module_name.split(".")
    single, package = base_dir / f"{parts[0]}.py", base_dir / parts[0] / "__init__.py"
    files = {single: single.is_file(), package: package.is_file()}
    if files[package]:
        directory = base_dir / parts[0]
        for part in parts[1:]:
            for candidate in (directory / part / "__init__.py", directory / f"{part}.py"):
                files[candidate] = candidate.is_file()
            directory = directory / part
    return files


def python_hook(
    node: Mapping[Any, Any], where: Where, base_dir: Path, import_now: bool
) -> HookCallable:
    """The callable a hook's `python:` names; not imported when `import_now` is false."""
    at = where.key(node, "python")
    reference = node["python"]
    if not isinstance(reference, str):
        raise at.error(f"expected 'package.module:function', got {describe(reference)}")
    module_name, attribute = split_reference(reference)
    if not module_name or not attribute:
        raise at.error(f"expected 'package.module:function', got {describe(reference)}")
    if not import_now:
        return _not_imported(reference)
    try:
        target: Any = _import(module_name, base_dir)
        for part in attribute.split("."):
            target = getattr(target, part)
    except Exception as exc:
        raise at.error(f"cannot import {reference!r}: {exc}",
                       hint="is the module on PYTHONPATH?") from exc  # fmt: skip
    if not callable(target):
        raise at.error(f"{reference!r} is not callable")
    return target  # type: ignore[no-any-return]


def _not_imported(reference: str) -> HookCallable:
    def refuse(payload: Mapping[str, Any]) -> Any:
        raise ConfigError(f"python hook {reference!r} was read without importing it")

    return refuse


def _import(module_name: str, base_dir: Path) -> Any:
    top, _, rest = module_name.partition(".")
    files = local_module_files(top, base_dir)
    local = [path for path, exists in files.items() if exists]
    if not local:
        return importlib.import_module(module_name)
    tag = sha256(str(base_dir).encode()).hexdigest()[:12]
    private = f"_hookgate_local_{tag}_{top}"
    with _LOADING:
        _load_local(private, local[0])
    return importlib.import_module(f"{private}.{rest}" if rest else private)


class _SourceOnly(importlib.machinery.SourceFileLoader):
    """A module compiled from its source, never from a `.pyc` in `__pycache__`: one
    forged there to match the pinned source's mtime and size would run in its place
    (`hooks/runs/bytecode.py`). A local package's other modules come from its folder,
    which trust pins whole and the sandbox keeps read-only."""

    def get_code(self, fullname: str) -> Any:
        return self.source_to_code(self.get_data(self.path), self.path)


def _load_local(private: str, path: Path) -> None:
    """Run the local module at `path` as `private`, once."""
    if private not in sys.modules:
        is_package = path.name == "__init__.py"
        spec = importlib.util.spec_from_file_location(
            private,
            path,
            loader=_SourceOnly(private, str(path)),
            submodule_search_locations=[str(path.parent)] if is_package else None,
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[private] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[private]
            raise
