"""Parsed files kept as JSON, keyed by the sha256 of their exact text.

A hit gives the same mappings, lists, scalars and line numbers the YAML parser gave,
without importing it (the parser is most of a `hooks fire` start-up); `recall` and
`keep` do the same for any parse whose result JSON holds (the commands of a hook's
shell script, which `hookgate hook` would otherwise parse at every event). Off unless
the application names a directory (`enable`); an entry that cannot be read or does
not have the expected shape is a miss, and a write that fails is skipped: the full
parse is always there behind it. Entries hold only what the file's text says, so they
grant nothing: trust is checked on the file's own bytes, never on this cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks.files.digest import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Changes whenever the stored form changes: older entries are then simply not found.
FORMAT = "yaml-v1"
_directory: Path | None = None


def enable(directory: Path | None) -> None:
    """Keep parsed files under `directory` (None: no cache, every file parsed)."""
    global _directory
    _directory = directory


class _Unplain(Exception):
    """A value JSON cannot hold exactly (a date, a `1:` key, a tag): not cached."""


class _Lines:
    """A node's `lc` as ruamel gives it: its own 0-based `line`, and (line, column) per
    key (`key`), per value (`value`) or per item (`item`); a position not noted raises."""

    __slots__ = ("_keys", "_values", "line")

    def __init__(
        self, line: int | None, keys: Mapping[Any, int | None], values: Mapping[Any, int | None]
    ) -> None:
        self.line = line
        self._keys = keys
        self._values = values

    def key(self, key: Any) -> tuple[int, int]:
        return _position(self._keys[key], key)

    def value(self, key: Any) -> tuple[int, int]:
        return _position(self._values[key], key)

    item = key


def _position(line: int | None, key: Any) -> tuple[int, int]:
    if line is None:
        raise KeyError(key)
    return (line, 0)


class CachedMapping(dict[str, object]):
    """A mapping read from the cache, with the line of each key."""

    __slots__ = ("lc",)
    lc: _Lines


class CachedList(list[object]):
    """A list read from the cache, with the line of each item."""

    __slots__ = ("lc",)
    lc: _Lines


def lookup(text: str) -> tuple[bool, Any]:
    """(True, the document) when `text` was parsed before; (False, None) otherwise."""
    found, stored = recall(FORMAT, text)
    if not found:
        return False, None
    try:
        return True, _thawed(stored)
    except (ValueError, TypeError, KeyError, IndexError, RecursionError):
        return False, None  # not ours: parse the file


def store(text: str, document: Any) -> None:
    """Keep `document`, parsed from `text`, if JSON holds it exactly; never fails."""
    try:
        frozen = _frozen(document)
    except (_Unplain, RecursionError):
        return
    keep(FORMAT, text, frozen)


def recall(kind: str, text: str) -> tuple[bool, Any]:
    """(True, what `keep` kept for `text` under `kind`, as JSON reads it) when it did;
    (False, None) otherwise. The caller checks its shape."""
    entry = _entry(kind, text)
    if entry is None:
        return False, None
    try:
        return True, json.loads(entry.read_bytes())
    except (OSError, ValueError, RecursionError):
        return False, None  # missing or unreadable: parse the file


def keep(kind: str, text: str, value: Any) -> None:
    """Keep `value`, parsed from `text`, under `kind` (a name that changes whenever its
    form does); never fails."""
    entry = _entry(kind, text)
    if entry is None:
        return
    try:
        frozen = json.dumps(value, separators=(",", ":"))
    except (RecursionError, ValueError, TypeError):
        return
    import contextlib  # a miss alone writes
    import tempfile

    with contextlib.suppress(OSError):
        _private_folders(entry.parent)
        handle, scratch = tempfile.mkstemp(dir=entry.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(frozen)
            os.replace(scratch, entry)  # readers see the old entry or the whole new one
        except OSError:
            os.unlink(scratch)
            raise


def _private_folders(folder: Path) -> None:
    """Make `folder` and each missing folder above it, private (0700) like the home they
    are in: a cache written first must not leave the home open to other users."""
    missing = []
    while not folder.is_dir() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        each.mkdir(mode=0o700, exist_ok=True)


def _entry(kind: str, text: str) -> Path | None:
    if _directory is None:
        return None
    digest = sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return _directory / kind / f"{digest}.json"


# The stored form: a mapping is ["m", line, [[key, key line, value line, value], ...]],
# a list ["s", line, [[line, value], ...]], a scalar itself (no scalar is a JSON array).


def _frozen(node: Any) -> Any:
    if isinstance(node, Mapping):
        pairs = []
        for key, value in node.items():
            if not isinstance(key, str):
                raise _Unplain
            lines = [_line(node, "key", key), _line(node, "value", key)]
            pairs.append([str(key), *lines, _frozen(value)])
        return ["m", _own_line(node), pairs]
    if isinstance(node, list):
        items = [[_line(node, "item", index), _frozen(value)] for index, value in enumerate(node)]
        return ["s", _own_line(node), items]
    if node is None or type(node) is bool:
        return node
    if isinstance(node, str):
        return str(node)
    if isinstance(node, int) and type(node).__name__ != "ScalarBoolean":
        return int(node)
    if isinstance(node, float):
        return float(node)
    raise _Unplain


def _line(node: Any, which: str, key: Any) -> int | None:
    try:
        position = getattr(node.lc, which)(key)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return int(position[0]) if position else None


def _own_line(node: Any) -> int | None:
    line = getattr(getattr(node, "lc", None), "line", None)
    return line if isinstance(line, int) else None


def _thawed(node: Any) -> Any:
    if node is None or isinstance(node, str | int | float):
        return node
    kind, line, members = node
    if kind == "m":
        mapping = CachedMapping()
        keys: dict[Any, int | None] = {}
        values: dict[Any, int | None] = {}
        for key, key_line, value_line, value in members:
            mapping[key] = _thawed(value)
            keys[key], values[key] = _checked(key_line), _checked(value_line)
        mapping.lc = _Lines(_checked(line), keys, values)
        return mapping
    if kind == "s":
        items = CachedList()
        lines: dict[Any, int | None] = {}
        for index, (item_line, value) in enumerate(members):
            items.append(_thawed(value))
            lines[index] = _checked(item_line)
        items.lc = _Lines(_checked(line), lines, {})
        return items
    raise ValueError(f"not a stored node: {kind!r}")


def _checked(line: Any) -> int | None:
    if line is not None and (type(line) is not int or line < 0):
        raise ValueError(f"not a line number: {line!r}")
    return line
