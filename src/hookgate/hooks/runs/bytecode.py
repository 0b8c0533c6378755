"""Where the Python that hooks run keeps its byte code: never in the project's folders.

Python imports a module from the `.pyc` in `__pycache__` beside its source when the
source's mtime and size recorded there match, and anyone who can read the source can
write a `.pyc` that matches. The model may write the project's own folder, so a `.pyc`
it forges there for a pinned `rules.py` would run in its place, outside the sandbox
(checked). `PYTHONPYCACHEPREFIX` makes Python read and write byte code under one
folder of its own instead: `environment()` points it into `$HOOKGATE_HOME/cache/`,
which the sandbox hides, for every hook and MCP server hookgate starts (a hook's own
`env:` may say otherwise). A `python:` hook's module, which hookgate imports itself, is
compiled from its source (`kinds/python.py`).
"""

from __future__ import annotations

from pathlib import Path

PREFIX_ENV = "PYTHONPYCACHEPREFIX"
#: The folder under the cache directory that holds the hooks' byte code.
FOLDER = "pycache"

_prefix: dict[str, str] = {}


def keep_in(cache: Path | None) -> None:
    """Keep the hooks' byte code under `cache` (None: where Python would, for a program
    without a hookgate home; the model's forged `.pyc` then goes unseen)."""
    _prefix.clear()
    if cache is not None:
        _prefix[PREFIX_ENV] = str(cache / FOLDER)


def environment() -> dict[str, str]:
    """The variable that keeps a hook's Python off the project's `__pycache__`, if set."""
    return dict(_prefix)
