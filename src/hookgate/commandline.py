"""argparse as the `hookgate` command line uses it: a parser that builds only the
commands its line names, help sized without `shutil`, and `--version` read when asked.

Imported only where a line is parsed by argparse: `hooks fire`'s usual line is read
without it (`hookgate.cli`), and argparse with gettext is ~9 M instructions to import.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
from collections.abc import Callable, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# argparse asks gettext for each message's translation as the parser is built, and
# gettext imports `locale` and looks for a catalogue on the file system each time (a
# stat or two a string). Python ships none for argparse, and hookgate's own messages
# are English: the messages are taken as they are (~1 ms of every start-up).
setattr(argparse, "_", str)  # noqa: B010 (not in typeshed)


def command_line(argv: Sequence[str] | None, **kwargs: Any) -> Parser:
    """The top parser for a line of words `argv`, with `Parser`'s `kwargs`: it builds
    only the commands `argv` names; None builds every command (all of the help)."""
    _terminal_columns.cache_clear()  # asked once per parser, not once per argument
    return Parser(words=None if argv is None else frozenset(argv), **kwargs)


class Parser(argparse.ArgumentParser):
    """argparse's parser, its subcommands' too, with help sized without `shutil`, and
    with only the subcommands it can meet built.

    argparse builds a help formatter for each argument added and sizes it with
    `shutil.get_terminal_size`; importing shutil (with bz2 and lzma) is about 2 ms of a
    start-up that only prints help when asked. Given `words`, the command line's words,
    a subcommand argparse cannot choose (its name is not one of them: it matches names
    whole) is only listed, for help (`_OnlyNamed`): building all twenty is ~3 ms of a
    `hooks fire`.
    """

    def __init__(
        self,
        *args: Any,
        words: frozenset[str] | None = None,
        listed_only: bool = False,
        **kwargs: Any,
    ) -> None:
        if listed_only:  # a command no word names: argparse never parses it (`_OnlyNamed`)
            return
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self._words = words

    def add_subparsers(self, **kwargs: Any) -> Any:
        action = super().add_subparsers(**kwargs)
        return action if self._words is None else _OnlyNamed(action, self._words)


class _OnlyNamed:
    """A subparsers action that builds a command only if `words` names it; any other is
    listed with its help, and what its builder adds to it goes nowhere (`Unbuilt`).

    argparse only ever parses with the parser of a name that is one of the line's words,
    so an unnamed command's entry in its map is a parser left unbuilt (`listed_only`):
    constructing one costs what adding a command's arguments does (2.7 M instructions
    of a `hooks fire`, of its twelve unnamed commands)."""

    def __init__(self, action: Any, words: frozenset[str]) -> None:
        self._action = action
        self._words = words

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        aliases = kwargs.get("aliases", ())
        if name in self._words or not self._words.isdisjoint(aliases):
            return self._action.add_parser(name, words=self._words, **kwargs)
        listed = {key: kwargs[key] for key in ("help", "aliases") if key in kwargs}
        self._action.add_parser(name, listed_only=True, **listed)
        return Unbuilt()


class Unbuilt:
    """A command that will not be parsed: every call to build it is taken and dropped."""

    def __getattr__(self, name: str) -> Callable[..., Unbuilt]:
        return lambda *_, **__: self


class _HelpFormatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:  # fmt: skip
        if width is None:  # as argparse's own: the terminal's columns, less two
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


@functools.cache
def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS, else stdout's terminal, else 80."""
    with contextlib.suppress(KeyError, ValueError):
        columns = int(os.environ["COLUMNS"])
        if columns > 0:
            return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no stdout, closed, or not a terminal
        return 80


class Version(argparse.Action):
    """`--version`, reading the installed version only when asked: importlib.metadata
    costs more than the rest of a `hooks fire` start-up."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"hookgate {_version()}")
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hookgate")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"
