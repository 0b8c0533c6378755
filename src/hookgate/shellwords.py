"""Command lines as the shell reads them: every simple command one line would run.

`parse_command_line` parses with tree-sitter's bash grammar and lists each command of
the line (lists, pipelines, `$( )`, backticks, subshells, groups, control structures,
the strings given to `bash -c`/`sh -c`/`eval`), as written and in the forms it would
run as (wrappers like `sudo`/`env`/`nice` stripped, `\\rm` and `/bin/rm` read as `rm`).
It returns None for a line the grammar cannot read.
"""

from __future__ import annotations

import codecs
import itertools
import re
import threading
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # loaded at the first line parsed: a session that judges no shell
    from tree_sitter import Node, Parser  # call (and every `hooks` command) skips it

_PARSERS = threading.local()  # a tree-sitter parser is not safe to share between threads

#: Commands that run the command after them, each with its options that take a value
#: and how many plain arguments come before that command (`timeout 5 rm`).
WRAPPERS: dict[str, tuple[str, int]] = {
    "command": ("", 0), "builtin": ("", 0), "exec": ("a", 0), "nohup": ("", 0),
    "time": ("fo", 0), "nice": ("n", 0), "env": ("uCS", 0), "sudo": ("ugpCDhrtTU", 0),
    "doas": ("uC", 0), "timeout": ("sk", 1), "stdbuf": ("ioe", 0), "ionice": ("cnp", 0),
    "setsid": ("", 0), "xargs": ("aEeIiLlnPsd", 0), "chrt": ("", 1), "taskset": ("", 1),
    "coproc": ("", 0), "unbuffer": ("", 0), "chroot": ("", 1), "flock": ("wE", 1),
    "busybox": ("", 0),
}  # fmt: skip
#: Shells (and `su`-likes) whose `-c STRING` is a command line of its own.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "su", "runuser"})
#: `find` actions that run the command after them.
FIND_EXECUTES = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
#: How deep `bash -c "bash -c '…'"` is followed before the line counts as unreadable.
MAX_NESTING = 8
#: Start points of the wrapper forms of one command; past it the command is unknown
#: (a thousand nested `nohup`s cost quadratic time to list).
MAX_WRAPPED_FORMS = 64
#: Characters of the longest line read command by command (about 0.5 s of parsing on
#: a slow machine); a longer one is unreadable: it asks, and any deny rule fires.
MAX_LINE = 64 * 1024
#: Words of an unreadable line listed for deny rules; past it, every deny rule fires.
MAX_ROUGH_WORDS = 512
#: Node types that make a line more than a list of simple commands.
_CONTROL = frozenset({
    "if_statement", "while_statement", "for_statement", "c_style_for_statement",
    "case_statement", "function_definition", "test_command",
})  # fmt: skip
#: Statements that are commands of their own (`PATH=/tmp/evil`, `export X`).
_STATEMENTS = frozenset({
    "variable_assignment", "variable_assignments", "declaration_command", "unset_command",
})  # fmt: skip
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")


class ShellCommand(NamedTuple):
    """One command of a command line."""

    written: str
    """Its text as written, redirects left out: what an allow rule must match."""
    forms: tuple[str, ...] = ()
    """Every form it could run as: what a deny rule is matched against."""
    known: bool = True
    """Whether what runs is known before it runs (`$CMD x` and `eval "$X"` are not)."""
    writes: bool = False
    """Whether a redirect writes a file."""


class CommandLine(NamedTuple):
    commands: tuple[ShellCommand, ...]
    simple: bool
    """Only commands joined by `;`, `&&`, `||`, `|`, `&`, newlines, groups and
    substitutions: no `if`, loops, `case`, functions or `[[ ]]`."""


class _Walk:
    """What a walk over a line found so far, and how deep in nested lines it is."""

    __slots__ = ("commands", "depth", "simple")

    def __init__(self) -> None:
        self.commands: list[ShellCommand] = []
        self.simple = True
        self.depth = 0


class _Unreadable(Exception):
    """The line, or one nested in it (`bash -c '…'`), cannot be read as bash would."""


def parse_command_line(line: str) -> CommandLine | None:
    """The commands `line` runs, or None when it does not parse (or is too long or deep)."""
    if len(line) > MAX_LINE:
        return None
    walk = _Walk()
    try:
        _walk_line(line, walk)
    except (_Unreadable, RecursionError):  # `$(echo $(echo …))` a thousand deep
        return None
    return CommandLine(tuple(walk.commands), walk.simple)


def rough_forms(line: str) -> tuple[str, ...] | None:
    """For a line that does not parse: every run of its words, from each word on.

    A deny rule that matches one of them could match what the shell would run. None
    past `MAX_ROUGH_WORDS` words: listing them would cost quadratic time.
    """
    words = [_base_name(word) for word in re.split(r"[\s;&|()`$<>{}'\"\\]+", line) if word]
    if len(words) > MAX_ROUGH_WORDS:
        return None
    return tuple(" ".join(words[start:]) for start in range(len(words)))


def _walk_line(line: str, walk: _Walk) -> None:
    if walk.depth > MAX_NESTING:
        raise _Unreadable
    # Bash drops backslash-newline before it reads words (`r\<newline>m` is `rm`); the
    # grammar does not, so a line holding one is read both ways and both must pass.
    variants = [line, line.replace("\\\n", "")] if "\\\n" in line else [line]
    for variant in variants:
        # Each character past ASCII is parsed as a letter: bash's operators and blanks
        # are all ASCII, so the words stay the same, and the grammar's scanner has
        # crashed the process on some characters past the BMP (tree-sitter-bash 0.25).
        tree = _parser().parse(_NON_ASCII.sub("x", variant).encode())
        if tree.root_node.has_error:
            raise _Unreadable
        _walk(tree.root_node, walk, variant, writes=False)


def _parser() -> Parser:
    if not hasattr(_PARSERS, "parser"):
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _PARSERS.parser = Parser(Language(tree_sitter_bash.language()))
    parser: Parser = _PARSERS.parser
    return parser


def _walk(node: Node, walk: _Walk, source: str, *, writes: bool) -> None:
    if node.type in _CONTROL:
        walk.simple = False
    if node.type == "redirected_statement":
        writes = writes or any(_writes_file(child, source) for child in node.children)
    if node.type == "command_substitution" and _text(node, source).startswith("`"):
        _walk_nested_backticks(node, walk, source)
    if node.type == "command":
        _add_command(node, walk, source, writes=writes)
    elif node.type in _STATEMENTS and node.parent is not None and node.parent.type != "command":
        walk.commands.append(
            ShellCommand(_text(node, source), (_text(node, source),), writes=writes)
        )
    for child in node.children:
        _walk(child, walk, source, writes=writes)


def _walk_nested_backticks(node: Node, walk: _Walk, source: str) -> None:
    """Inside backticks bash unescapes \\` and parses again: `echo \\`rm x\\`` runs rm."""
    inner = _text(node, source)[1:-1]
    if "\\`" in inner:
        walk.depth += 1
        try:
            _walk_line(re.sub(r"\\([\\`$])", r"\1", inner), walk)
        finally:
            walk.depth -= 1


def _writes_file(redirect: Node, source: str) -> bool:
    if redirect.type != "file_redirect":
        return False
    operators = [child.type for child in redirect.children]
    target = redirect.children[-1]
    return (
        any(op in _WRITES for op in operators)
        and _word_value(target, source) not in _HARMLESS_TARGETS
    )


def _add_command(node: Node, walk: _Walk, source: str, *, writes: bool) -> None:
    for before, after in itertools.pairwise(node.children):
        if "\n" in source[before.end_byte : after.start_byte].replace("\\\n", ""):
            # A newline ends a command in bash; the grammar sometimes reads on past it
            # (`a | b | c⏎rm x && d` as `c rm x`), so the line is read as unreadable.
            raise _Unreadable
    written = _text(node, source)
    writes = writes or any(_writes_file(child, source) for child in node.children)
    words = [
        child
        for child in node.children
        if child.type != "variable_assignment" and not child.type.endswith("_redirect")
    ]
    values = [_word_value(word, source) for word in words]
    texts = [
        value if value is not None else _text(word, source)
        for word, value in zip(words, values, strict=True)
    ]
    start = _principal(values)
    wrapped = _wrapped_forms(values, texts)
    known = start is not None and wrapped is not None
    forms = [written, " ".join(texts)]
    if start is not None:
        principal = [_base_name(texts[start]), *texts[start + 1 :]]
        forms.append(" ".join(principal))
        forms.extend(_executed_forms(principal))
        if not _follow_script(values[start:], walk):
            known = False
    forms.extend(wrapped or ())
    walk.commands.append(ShellCommand(written, tuple(dict.fromkeys(forms)), known, writes))


def _principal(values: list[str | None]) -> int | None:
    """Where the command that really runs starts, past wrappers; None when not literal."""
    index = 0
    while index < len(values):
        value = values[index]
        if value is None:
            return None
        name = _base_name(value)
        if name not in WRAPPERS:
            return index
        takes_value, positional = WRAPPERS[name]
        wrapper, index = index, index + 1
        while index < len(values) and (values[index] or "").startswith("-"):
            option = values[index] or ""
            index += 2 if len(option) == 2 and option[1] in takes_value else 1
        while index < len(values) and _ASSIGNMENT.match(values[index] or "") and name == "env":
            index += 1
        index += positional
        if index >= len(values):
            return wrapper  # `env` alone: the wrapper itself is what runs
    return None


def _wrapped_forms(values: list[str | None], texts: list[str]) -> list[str] | None:
    """After the first wrapper, the words from each plain word on (`sudo -u x rm y`)."""
    first = next(
        (i for i, v in enumerate(values) if v is not None and _base_name(v) in WRAPPERS), None
    )
    if first is None:
        return []
    starts = [i for i in range(first + 1, len(texts)) if not texts[i].startswith("-")]
    if len(starts) > MAX_WRAPPED_FORMS:
        return None
    return [" ".join([_base_name(texts[i]), *texts[i + 1 :]]) for i in starts]


def _executed_forms(words: list[str]) -> list[str]:
    """The commands `find` runs: `find . -exec rm {} +` runs `rm {} +`."""
    if words[0] != "find":
        return []
    starts = [i + 1 for i in range(len(words) - 1) if words[i] in FIND_EXECUTES]
    if len(starts) > MAX_WRAPPED_FORMS:
        raise _Unreadable  # listing them would cost quadratic time
    return [" ".join([_base_name(words[i]), *words[i + 1 :]]) for i in starts]


def _follow_script(values: list[str | None], walk: _Walk) -> bool:
    """Walk the command line a shell's `-c` or `eval` runs; False when it is not literal."""
    script = _script_of(values)
    if script is None:
        return True
    if not script:
        return False
    walk.depth += 1
    try:
        _walk_line(script[0], walk)
    finally:
        walk.depth -= 1
    return True


def _script_of(values: list[str | None]) -> list[str] | None:
    """`[script]` for `sh -c script`/`eval words`; `[]` when it is not literal; else None."""
    name = _base_name(values[0] or "")
    if name == "eval":
        rest = values[1:]
        return [] if None in rest else [" ".join(v for v in rest if v is not None)]
    if name not in SHELLS:
        return None
    for index, value in enumerate(values[1:], 1):
        if value is None:
            return []
        if value.startswith("-") and not value.startswith("--") and "c" in value:
            following = values[index + 1] if index + 1 < len(values) else None
            return [following] if following is not None else []
    return None


def _word_value(node: Node, source: str) -> str | None:
    """A word as the shell passes it on, quotes and escapes removed; None if it expands."""
    text = _text(node, source)
    if node.type in ("word", "number"):
        return _ESCAPED.sub(r"\1", text)
    if node.type == "raw_string":
        return text[1:-1]
    if node.type == "ansi_c_string":
        try:
            return codecs.decode(text[2:-1], "unicode_escape")
        except UnicodeError:
            return None
    if node.type == "command_name":
        return _joined(node.children, source)
    if node.type == "string":
        return _joined(node.children[1:-1], source)
    if node.type == "string_content":
        return re.sub(r"\\([$`\"\\\n])", r"\1", text)
    if node.type == "concatenation":
        return _joined(node.children, source)
    return None


def _joined(nodes: list[Node], source: str) -> str | None:
    values = [_word_value(node, source) for node in nodes]
    return None if None in values else "".join(v for v in values if v is not None)


def _base_name(word: str) -> str:
    """`/bin/rm` and `./rm` name `rm`."""
    return word.rstrip("/").rsplit("/", 1)[-1] or word


def _text(node: Node, source: str) -> str:
    # The tree was parsed from `source` with one ASCII byte per character (see
    # `_walk_line`), so its byte offsets are `source`'s character offsets.
    return source[node.start_byte : node.end_byte].strip()
