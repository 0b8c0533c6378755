"""Strict YAML reading that remembers where each value came from.

`load_yaml` parses a file (duplicate keys are errors); `Where` is a position in it,
a file, a line and a key path, that turns a mistake into a `ConfigError` saying
exactly that, with a hint. Shared by the hook config and the agent file. A file
parsed before comes from `parsecache` (when enabled), without importing the parser.
Both ends are bounded, for a file that came with a repository nobody trusts yet:
`read_file` reads only a regular file, to `MAX_SIZE`, and a document whose aliases
expand past `MAX_VALUES` values is refused. `script_interpreter` reads the one line of
a hook script that `hooks check` and the trust resolver ask about: its `#!` line.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from hookgate.hooks.errors import Collected, ConfigError
from hookgate.hooks.files import parsecache
from hookgate.hooks.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

#: Bytes a config file may hold (characters, of a text given whole). Agent files, hook
#: configs and model scripts are a few KiB; a larger one is refused unparsed (the parser
#: reads about a MiB a second, and the file may come with a repository nobody trusts yet).
MAX_SIZE = 4 * 1024 * 1024
#: Values a parsed document may hold, each alias counted as the copy it stands for: an
#: alias bomb (an anchor of nine aliases of an anchor of nine aliases, ten deep) is a
#: few hundred bytes that expand to billions of values wherever the document is walked.
#: A file of `MAX_SIZE` without aliases holds about this many at most.
MAX_VALUES = 1_000_000


def open_regular(path: str | os.PathLike[str]) -> BinaryIO | None:
    """`path` opened for reading, or None (nothing left open) where it is no regular file.

    Opened without blocking and checked on the open descriptor, before any file object
    is made (`fdopen` raises on a directory): a named pipe, a device or a symlink to
    /dev/zero planted in a repository never hangs the reader or fills its memory.
    Raises `OSError` (`FileNotFoundError`, ...) where it cannot be opened at all.
    """
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    return os.fdopen(descriptor, "rb")


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes | None:
    """At most `limit` bytes of `path`, or None where it cannot be opened or is no
    regular file (`open_regular`): a repository's file, read without waiting on a pipe."""
    try:
        file = open_regular(path)
    except OSError:
        return None
    if file is None:
        return None
    with file:
        return file.read(limit)


def script_interpreter(path: Path) -> str | None:
    """The program a script's `#!` line names (`/usr/bin/env -S bash` → `bash`), or
    None: what `hooks check` checks a script's syntax with, and what tells the trust
    resolver a shell script from another. Read as any file of a repository is: a named
    pipe planted there is no script, and is not waited on (`open_regular`)."""
    try:
        file = open_regular(path)
    except OSError:
        return None
    if file is None:
        return None
    with file:
        first = file.readline(256)
    words = first[2:].decode("utf-8", "replace").split() if first.startswith(b"#!") else []
    if words and os.path.basename(words[0]) == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
    return words[0] if words else None


def read_file(path: Path) -> bytes:
    """The bytes of the config file at `path`, which must be a regular file of at most
    `MAX_SIZE` bytes; else `ConfigError`. Raises `FileNotFoundError` and other `OSError`s.
    """
    file = open_regular(path)
    if file is None:
        target = os.path.realpath(path)
        link = f" (a link to {target})" if target != os.path.abspath(path) else ""
        raise ConfigError(
            f"{path}: not a regular file{link}",
            hint="a config file is a plain file, not a directory, device or pipe",
        )
    with file:
        data = file.read(MAX_SIZE + 1)
    if len(data) > MAX_SIZE:
        raise ConfigError(
            f"{path}: more than {MAX_SIZE:,} bytes, more than a config file may hold",
            hint="a config file is a few KiB: is it the file you meant?",
        )
    return data


def read_text(path: Path) -> str:
    """`read_file`, decoded; a missing file, or one that cannot be read, is a `ConfigError`."""
    try:
        return read_file(path).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no such file", hint="create it (hookgate init), or name another with --agent"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc


def load_yaml(path: Path) -> Any:
    """Parse `path`; a missing file or bad YAML is a `ConfigError` naming file and line."""
    return read_config(read_text(path), str(path))


def read_config(text: str, source: str) -> Any:
    """`parse_yaml`, or its result kept from an earlier parse of the same text: plain
    mappings, lists and scalars whose `lc` gives each key's and item's line."""
    if len(text) > MAX_SIZE:
        raise ConfigError(
            f"{source}: {len(text):,} characters, more than a config file may hold ({MAX_SIZE:,})",
            hint="a config file is a few KiB: is it the file you meant?",
        )
    found, document = parsecache.lookup(text)
    if found:
        return document
    document = parse_yaml(text, source)
    parsecache.store(text, document)
    return document


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML `text` read from `source` (a file name, for messages), with ruamel's
    round-trip types."""
    from ruamel.yaml import YAML  # only a file not parsed before pays for the parser
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.reader import ReaderError

    try:
        document = YAML(typ="rt", pure=True).load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark else ""
        raise ConfigError(f"{source}{line}: invalid YAML: {exc.problem or exc.context}") from exc
    except ReaderError as exc:  # a character YAML does not allow, such as a control character
        number = text[: exc.position].count("\n") + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise ConfigError(
            f"{source}:{number}: invalid YAML: character U+{code:04X} is not allowed",
            hint="remove it, or write it as an escape in a double-quoted string",
        ) from exc
    except YAMLError as exc:
        raise ConfigError(f"{source}: invalid YAML: {' '.join(str(exc).split())}") from exc
    except Exception as exc:
        # ruamel's constructors raise assorted built-in errors on malformed tagged
        # scalars (`!!int` alone: IndexError; `!!bool x`: KeyError): still bad YAML.
        raise ConfigError(f"{source}: invalid YAML: {type(exc).__name__}: {exc}") from exc
    _check_expansion(document, source)
    return document


def _check_expansion(document: Any, source: str) -> None:
    """Refuse a document past `MAX_VALUES` values with its aliases expanded; the count
    stops there, so a bomb costs no more than a large honest file."""
    left = MAX_VALUES
    pending = [document]
    while pending:
        node = pending.pop()
        left -= 1
        if left < 0:
            raise ConfigError(
                f"{source}: more than {MAX_VALUES:,} values, each alias counted as a copy "
                "of its anchor",
                hint="an alias (*name) stands for its anchor's whole value, so aliases of "
                "aliases multiply: a config file holds hundreds of values",
            )
        if isinstance(node, Mapping):
            pending.extend(node.keys())
            pending.extend(node.values())
        elif isinstance(node, list | tuple):
            pending.extend(node)


class Where(NamedTuple):
    """A position in a config file: file, line (1-based, when known) and key path."""

    file: str
    path: str = ""
    line: int | None = None

    def key(self, node: Any, key: Any) -> Where:
        """The position of `node[key]`; `key` as YAML read it (`1:` and `null:` are not strings)."""
        name = str(key) if key != "" else "''"  # an empty key must still show in the path
        path = f"{self.path}.{name}" if self.path else name
        return Where(self.file, path, _line_of(node, key, item=False) or self.line)

    def item(self, node: Any, index: int) -> Where:
        """The position of `node[index]`."""
        return Where(
            self.file, f"{self.path}[{index}]", _line_of(node, index, item=True) or self.line
        )

    def error(self, message: str, *, hint: str | None = None) -> ConfigError:
        line = f":{self.line}" if self.line else ""
        path = f" {self.path}:" if self.path else ""
        return ConfigError(f"{self.file}{line}:{path} {message}", hint=hint)


def _line_of(node: Any, key: Any, *, item: bool) -> int | None:
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        position = lc.item(key) if item else lc.key(key)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return int(position[0]) + 1 if position else None  # `!!omap` notes no positions


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """A hint naming the closest choice to `word`, if one is close."""
    import difflib  # only a mistake pays for it: every start-up reads a config

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close and isinstance(word, str):
        lowered = {choice.lower(): choice for choice in choices}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    return f"did you mean {close[0]!r}?" if close else None


def expect_mapping(node: Any, where: Where, what: str) -> Mapping[Any, Any]:
    """`node` if it is a mapping, else the error a user needs."""
    if not isinstance(node, Mapping):
        raise where.error(f"expected {what} (a mapping), got {_kind(node)} {node!r}")
    return node


def check_keys(node: Mapping[Any, Any], where: Where, allowed: Iterable[str]) -> None:
    """Refuse the keys of `node` not in `allowed`, all of them at once, each with a
    did-you-mean hint."""
    allowed = tuple(allowed)
    found = Collected()
    for key in node:
        if not isinstance(key, str) or key not in allowed:
            hint = did_you_mean(str(key), allowed) or f"known keys: {', '.join(allowed)}"
            found.errors.append(where.key(node, key).error(f"unknown key {key!r}", hint=hint))
    found.raise_any()


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def describe(value: Any) -> str:
    """`value` as an error message shows it: its kind and its repr."""
    return f"{_kind(value)} {value!r}" if value is not None else "nothing"
