"""Command lines as the shell reads them: every command one line would run, and what a
rule cannot read in it.

`parse_command_line` parses with tree-sitter's bash grammar and lists each command of
the line (lists, pipelines, `$( )`, backticks, subshells, groups, control structures,
and every literal command line a command makes a shell run: `bash -c`, `eval`, `trap`,
a here-string or here-doc fed to a shell, `watch`, `script -c`, … see `code`), as
written and in the forms it would run as (wrappers like `sudo`/`env`/`nice` stripped,
`\\rm` and `/bin/rm` read as `rm`). Each command says why a rule cannot read it whole:
`opaque` (a part is built at run time, or a redirect writes) and `hidden` (what runs is
not known before it runs). It returns None for a line the grammar cannot read.
"""

from __future__ import annotations

import itertools
import re
from _thread import _local  # `threading.local` itself: `threading` costs a start-up 1 ms
from typing import TYPE_CHECKING, cast

from hookgate.hooks.records import NamedTuple
from hookgate.hooks.shell.code import (  # it and runners import nothing else of hookgate
    MAX_WRAPPED_FORMS,
    WRAPPERS,
    Runs,
    Stdin,
    assigned_by_command,
    assignment_runs,
    commands_run,
    runs_code_when_set,
    sets_code_variable_in_arithmetic,
)
from hookgate.hooks.shell.literal import literal, node_text, word_value

if TYPE_CHECKING:  # loaded at the first line parsed: a session that judges no shell
    from collections.abc import Callable

    from tree_sitter import Node, Parser  # call (and every `hooks` command) skips it

__all__ = [
    "MAX_LINE", "MAX_WRAPPED_FORMS", "WRAPPERS", "CommandLine", "ShellCommand",
    "parse_command_line",
]  # fmt: skip

_PARSERS = _local()  # a tree-sitter parser is not safe to share between threads

#: How deep `bash -c "bash -c '…'"` is followed before the line counts as unreadable.
MAX_NESTING = 8
#: Characters of the longest line read command by command (about 0.5 s of parsing on
#: a slow machine); a longer one is unreadable: it asks, and any deny rule fires.
MAX_LINE = 64 * 1024
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
#: Paths bash opens as sockets rather than files.
_NETWORK_FILES = ("/dev/tcp/", "/dev/udp/")
#: Node types whose text is literal: a subscript in it may still run code (see below).
_LITERAL_TYPES = frozenset({"word", "raw_string", "string_content", "ansi_c_string",
                            "heredoc_body"})  # fmt: skip
#: An array subscript holding code: bash runs it wherever it evaluates the subscript
#: (`printf -v`, `read`, `test -v`, `unset`, `declare`, `let`, arithmetic on a variable).
#: Any `[` with code anywhere after it: subscripts nest (`a[x[0]+$(…)]`).
_SUBSCRIPT_CODE = re.compile(r"\[.*(\$[({\[]|`)", re.DOTALL)
#: Backticks in a `${…}` operand, which the grammar leaves a plain word (`${x:-`rm x`}`).
_BACKTICKS = re.compile(r"`((?:[^`\\]|\\.)*)`", re.DOTALL)
#: Node types where bash evaluates text as arithmetic: a variable's value there is read
#: as an expression, and an array subscript in it runs its code (`x='a[$(…)]'; $((x))`).
_ARITHMETIC = frozenset({"arithmetic_expansion", "c_style_for_statement", "subscript"})
#: Literal node types whose value may hold a `$` an expansion of it then gives.
_DOLLAR_TYPES = frozenset({"raw_string", "ansi_c_string", "string_content"})
#: The parts of a `${…}` that only read a variable (`${x}`, `${a[0]}`, `${#x}`).
_PLAIN_EXPANSION = frozenset({"${", "}", "variable_name", "subscript", "#", "!"})
#: Node types that give the line a value known only at run time.
_RUN_TIME_VALUES = frozenset({"command_substitution", "process_substitution"})
#: Words that give a variable a value read at run time (`printf -v`).
_READS_VALUES = frozenset({"read", "mapfile", "readarray", "getopts", "-v"})
#: Test operators that evaluate their operands as arithmetic or as a variable's name.
_TEST_EVALUATES = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v", "-R"})
#: The node types `_note_values` looks at.
_VALUE_NODES = _ARITHMETIC | _RUN_TIME_VALUES | _DOLLAR_TYPES | {
    "compound_statement", "variable_assignment", "word", "test_operator", "unset_command",
    "array", "for_statement",
}  # fmt: skip
#: Builtins that evaluate their words as arithmetic (`let`) or as names (`unset`).
_EVALUATES = frozenset({"let", "unset"})
#: Node types whose text, escapes read, may spell a subscript with code in it.
_SPELLED_TYPES = _LITERAL_TYPES | {"concatenation", "string", "subscript"}
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
#: Why an allow rule does not cover a command that expands something at run time.
BUILT_AT_RUN_TIME = "this command builds part of itself at run time"


class ShellCommand(NamedTuple):
    """One command of a command line."""

    written: str
    """Its text as written, redirects left out: what an allow rule must match."""
    forms: tuple[str, ...] = ()
    """Every form it could run as: what a deny rule is matched against."""
    hidden: str | None = None
    """Why what it runs is not known before it runs (`$CMD x`, `echo … | bash`): every
    deny rule fires on it. None: known."""
    opaque: str | None = None
    """Why an allow rule cannot read it whole (an expansion, a glob, a redirect that
    writes, or `hidden`). None: it reads whole."""
    redirected: tuple[tuple[str, str], ...] = ()
    """The files its redirects open, each `("read" | "write", path as written)`: what
    `read_file(…)` and `write_file(…)` deny rules judge."""
    inside: str | None = None
    """The command that runs it as code of its own (`bash <<< 'rm x'` for `rm x`)."""

    @property
    def known(self) -> bool:
        return self.hidden is None


class CommandLine(NamedTuple):
    commands: tuple[ShellCommand, ...]
    simple: bool
    """Only commands joined by `;`, `&&`, `||`, `|`, `&`, newlines, groups and
    substitutions: no `if`, loops, `case`, functions or `[[ ]]`."""


class _Walk:
    """What a walk over a line found so far, and how deep in nested lines it is."""

    __slots__ = (
        "commands", "depth", "dollar_value", "evaluates", "evaluates_expansion", "inside",
        "run_time_value", "simple",
    )  # fmt: skip

    def __init__(self) -> None:
        self.commands: list[ShellCommand] = []
        self.simple = True
        self.depth = 0
        self.inside: str | None = None
        """The command whose code the walk is reading now (`bash -c '…'`), if any."""
        self.run_time_value: str | None = None
        """Where the line gives a variable a value only known at run time, if it does."""
        self.evaluates: str | None = None
        """Where the line evaluates arithmetic, or names a variable by a value, if it does."""
        self.evaluates_expansion: str | None = None
        """Where it evaluates text with an expansion in it (`$((a[$y))`), if it does."""
        self.dollar_value: str | None = None
        """A value of the line an expansion may give that holds a `$` or a backtick
        (`y='$(rm x)]'`), or that an expansion computes (`${x/</[}`), if any."""


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
    source = walk.run_time_value or (walk.evaluates_expansion and walk.dollar_value)
    if walk.evaluates is not None and source:
        evaluated = walk.evaluates_expansion if walk.run_time_value is None else walk.evaluates
        why = (
            f"{BUILT_AT_RUN_TIME}: {evaluated} evaluates a value only known at run time "
            f"({source}), and an array subscript in it runs code"
        )
        walk.commands.append(ShellCommand(evaluated or "", (evaluated or "",), why, why))
    return CommandLine(tuple(walk.commands), walk.simple)


def _walk_line(line: str, walk: _Walk) -> None:
    if walk.depth > MAX_NESTING or len(line) > MAX_LINE:
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
        _walk(tree.root_node, walk, variant, ())


def _check_heredoc(redirect: Node, walk: _Walk, source: str) -> None:
    """Bash ends a here-doc at a line that is its delimiter with the quotes removed
    (`<<E"O"F` ends at `EOF`); the grammar at the delimiter as written. Where the two
    could differ, the lines between would run unseen: the line is unreadable."""
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    end = next((c for c in redirect.children if c.type == "heredoc_end"), None)
    body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
    if start is None:
        return
    delimiter = _unquoted_delimiter(node_text(start, source))
    if delimiter is None or (end is not None and node_text(end, source) != delimiter):
        raise _Unreadable
    lines = source[body.start_byte : body.end_byte].split("\n") if body is not None else []
    if any(delimiter in (line, line.lstrip("\t")) for line in lines):
        raise _Unreadable


def _unquoted_delimiter(written: str) -> str | None:
    """A here-doc delimiter as bash compares it, quotes removed; None where unsure."""
    if not any(c in written for c in "'\"\\$`"):
        return written
    match = re.fullmatch(
        r"""(?:[^'"\\$`]|\\[^\n]|'[^']*'|"[^"\\$`]*"|\$'[^'\\]*'|\$"[^"\\$`]*")*""", written
    )
    if match is None:
        return None
    parts = re.findall(r"""\$?'([^']*)'|\$?"([^"]*)"|\\(.)|([^'"\\$])""", written)
    return "".join("".join(part) for part in parts)


def _parser() -> Parser:
    if not hasattr(_PARSERS, "parser"):
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _PARSERS.parser = Parser(Language(tree_sitter_bash.language()))
    parser: Parser = _PARSERS.parser
    return parser


def _walk(node: Node, walk: _Walk, source: str, redirects: tuple[Node, ...]) -> None:
    """Add the commands under `node`; `redirects`: those of the statements around it."""
    kind = node.type  # each access builds the string anew
    if kind in _CONTROL:
        walk.simple = False
    if kind in _SPELLED_TYPES:
        _check_subscripts(node, walk, source)
    if kind in _VALUE_NODES:
        _note_values(node, kind, walk, source)
    if kind in _CHECKED:
        _CHECKED[kind](node, walk, source)
    if kind == "redirected_statement":
        own = tuple(child for child in node.children if child.type.endswith("_redirect"))
        redirects = (*redirects, *own)
    if kind == "command":
        _add_command(node, walk, source, redirects)
    elif kind in _STATEMENTS and node.parent is not None and node.parent.type not in (
        "command", "declaration_command", "variable_assignments"
    ):  # fmt: skip
        _add_statement(node, walk, source)
    for child in node.children:
        _walk(child, walk, source, redirects)


def _check_subscripts(node: Node, walk: _Walk, source: str) -> None:
    """A word holding `a[$(…)]`, as written or spelled with escapes and quotes
    (`$'a\\x5b…'`, `'a['"\\$(…)"']'`): code bash may run wherever it reads it as a name."""
    text = node_text(node, source)
    if "[" not in text and "\\" not in text:  # only an escape spells `[` otherwise
        return
    why = _subscript_code(text) or _subscript_code(_spelled(node, source))
    if why is not None:
        walk.commands.append(ShellCommand(text, (text,), why, why))


def _spelled(node: Node, source: str) -> str:
    """A word with each part that expands nothing read as bash passes it on, and each
    part that does left as written (`$'a\\x5b'$x'$(…)]'` is `a[$x$(…)]`)."""
    value = word_value(node, source)
    if value is not None:
        return value
    children = node.children
    return "".join(_spelled(c, source) for c in children) if children else node_text(node, source)


def _check_expansion(node: Node, walk: _Walk, source: str) -> None:
    """`${x@P}` runs the code in x's value as a prompt does; backticks in an operand
    (`${x:-`rm x`}`), which the grammar leaves a word, run as a command substitution."""
    text = node_text(node, source)
    operators = [child.type for child in node.children]
    if ("@" in operators and "P" in operators) or re.search(r"@P\}$", text):
        why = f"{text} expands a prompt, running the code in the variable's value"
        walk.commands.append(ShellCommand(text, (text,), why, why))
    if "!" in operators or ":" in operators:
        walk.evaluates = walk.evaluates or text  # `${!x}` names a variable by x's value
        walk.evaluates_expansion = walk.evaluates_expansion or text
    if not _PLAIN_EXPANSION.issuperset(operators):  # `${x/</[}`: a value it computes
        walk.dollar_value = walk.dollar_value or text
    if ("=" in operators or ":=" in operators) and len(node.children) > 1:
        name = node_text(node.children[1], source)
        if runs_code_when_set(name):  # `${PS4='$(rm x)'}` assigns PS4
            why = f"{text} sets {name}, which runs code"
            walk.commands.append(ShellCommand(text, (text,), why, why))
    for code in _BACKTICKS.findall(text):
        _walk_nested(re.sub(r"\\([\\`$])", r"\1", code), walk, text)
    if text.count("`") % 2:
        raise _Unreadable


def _check_loop(node: Node, walk: _Walk, source: str) -> None:
    """`for PS4 in '$(rm x)'`, `select BASH_ENV in …`: the loop sets its variable."""
    name = next((c for c in node.children if c.type == "variable_name"), None)
    if name is not None and runs_code_when_set(node_text(name, source)):
        text = node_text(node, source)
        why = f"the loop sets {node_text(name, source)}, which runs code"
        walk.commands.append(ShellCommand(text, (text,), why, why))


def _note_values(node: Node, kind: str, walk: _Walk, source: str) -> None:
    """Where bash evaluates arithmetic or a name, and where a value is known only at
    run time or holds a `$`: the two together may run code (see `parse_command_line`)."""
    text = node_text(node, source)
    if kind in _DOLLAR_TYPES or (kind == "word" and "\\" in text):  # `\$`, `$'\x24'`
        if "$" in (word_value(node, source) or "$") or "`" in text:
            walk.dollar_value = walk.dollar_value or text
        if kind != "word":
            return
    if _evaluates(node, kind, text, source):
        expression = _evaluated_text(node, kind, text, source)
        walk.evaluates = walk.evaluates or expression
        inner = expression.removeprefix("$((").removeprefix("$[")
        if "$" in inner or "`" in inner:
            walk.evaluates_expansion = walk.evaluates_expansion or expression
        _check_arithmetic_names(expression, walk)
    elif kind in _RUN_TIME_VALUES or (kind == "word" and text in _READS_VALUES) or (
        kind == "variable_assignment" and len(node.children) > 2
        and literal(node.children[-1], source) is None
    ) or (kind == "for_statement" and _loops_over_run_time_values(node, source)):  # fmt: skip
        walk.run_time_value = walk.run_time_value or text


def _loops_over_run_time_values(node: Node, source: str) -> bool:
    """`for x in $(…)`, `for x in *`, `select` (it reads REPLY): a value set at run
    time; `for x in 1 2` and `for x` (a `-c` line's arguments, none) are not."""
    children = node.children
    listed = next((i for i, child in enumerate(children) if child.type == "in"), None)
    if children[0].type == "select":
        return True
    if listed is None:
        return False
    values = itertools.takewhile(lambda child: child.type not in (";", "do_group"),
                                 children[listed + 1 :])  # fmt: skip
    return any(literal(child, source) is None for child in values)


def _evaluated_text(node: Node, kind: str, text: str, source: str) -> str:
    """The text around an evaluating `node`: the command of `let`, `test -v`, the
    test of `-eq`; the node's own elsewhere."""
    whole = node.parent if kind in ("word", "test_operator") else node
    if whole is not None and whole.type == "command_name":
        whole = whole.parent
    return text if whole is None else node_text(whole, source)


def _check_arithmetic_names(expression: str, walk: _Walk) -> None:
    """Arithmetic may assign (`((BASH_CMDS[ls]=0))`, `let PS4=1`, `[ a[PS4=1] -eq 0 ]`):
    one that names a variable that runs code hides what runs."""
    named = sets_code_variable_in_arithmetic(expression)
    if named is not None:
        why = f"{expression} may set {named}, which runs code"
        walk.commands.append(ShellCommand(expression, (expression,), why, why))


def _evaluates(node: Node, kind: str, text: str, source: str) -> bool:
    """Whether bash evaluates arithmetic, or a variable's name, at `node`: `$((…))`,
    `((…))`, `a[…]`, `a=([i]=…)`, `let`, `unset`, `[[ x -eq y ]]`, `test -v x`,
    `declare -i`."""
    if kind in _ARITHMETIC or kind == "unset_command":
        return True
    if kind == "compound_statement":
        return text[:2] == "(("
    if kind == "array":
        return "[" in text
    if kind == "test_operator":
        return text in _TEST_EVALUATES
    if kind != "word" or text in _EVALUATES:
        return kind == "word"
    return text[:1] == "-" and _evaluating_option(node, text, source)


def _evaluating_option(node: Node, text: str, source: str) -> bool:
    """`declare -i x` (each value of x is evaluated), `test -v x`, `[ x -eq y ]`."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "declaration_command":
        return "i" in text
    return (
        text in _TEST_EVALUATES
        and parent.type == "command"
        and any(node_text(child, source) in ("test", "[") for child in parent.children)
    )


def _subscript_code(value: str) -> str | None:
    if _SUBSCRIPT_CODE.search(value) is None:
        return None
    return f"{BUILT_AT_RUN_TIME}: {value} is an array subscript bash evaluates, running its code"


def _walk_nested_backticks(node: Node, walk: _Walk, source: str) -> None:
    """Inside backticks bash unescapes \\` and parses again: `echo \\`rm x\\`` runs rm."""
    text = node_text(node, source)
    inner = text[1:-1]
    if text.startswith("`") and "\\`" in inner:
        _walk_nested(re.sub(r"\\([\\`$])", r"\1", inner), walk, node_text(node, source))


#: The checks `_walk` makes on a node of each of these types.
_CHECKED: dict[str, Callable[[Node, _Walk, str], None]] = {
    "command_substitution": _walk_nested_backticks, "heredoc_redirect": _check_heredoc,
    "expansion": _check_expansion, "for_statement": _check_loop,
}  # fmt: skip


def _walk_nested(script: str, walk: _Walk, inside: str) -> None:
    """Walk `script`, the code the command `inside` runs, one level deeper."""
    walk.depth += 1
    outer, walk.inside = walk.inside, inside
    try:
        _walk_line(script, walk)
    finally:
        walk.depth -= 1
        walk.inside = outer


def _add_command(node: Node, walk: _Walk, source: str, around: tuple[Node, ...]) -> None:
    children = node.children  # each access builds the list anew
    for before, after in itertools.pairwise(children):
        if "\n" in source[before.end_byte : after.start_byte].replace("\\\n", ""):
            # A newline ends a command in bash; the grammar sometimes reads on past it
            # (`a | b | c⏎rm x && d` as `c rm x`), so the line is read as unreadable.
            raise _Unreadable
    written = node_text(node, source)
    own = [child for child in children if child.type.endswith("_redirect")]
    if node.parent is not None and node.parent.type == "redirected_statement":
        own += [child for child in node.parent.children if child.type.endswith("_redirect")]
    words = _words(
        [child for child in children
         if child.type != "variable_assignment" and not child.type.endswith("_redirect")]
    )  # fmt: skip
    values = [literal(word, source) for word in words]
    texts = [
        value if value is not None else node_text(word, source)
        for word, value in zip(words, values, strict=True)
    ]
    stdin = _stdin(node, own, around, source)
    runs = commands_run(values, texts, stdin)
    # A word's parts may each look harmless ('a['"\$(id)"']'): the whole word is judged.
    spelled = (word_value(word, source) or "" for word in words)
    hidden = runs.hidden or next(filter(None, map(_subscript_code, spelled)), None)
    runs = Runs(runs.forms, runs.scripts, hidden)
    opaque = runs.hidden
    for child in children:
        if child.type == "variable_assignment":
            assigned, assigned_opaque = _assignment(child, source)
            runs, opaque = runs.plus(assigned), opaque or assigned_opaque
    built = next((t for v, t in zip(values, texts, strict=True) if v is None), None)
    if built is not None:
        opaque = opaque or f"{BUILT_AT_RUN_TIME} ({built})"
    opaque = opaque or _redirect_problem([*own, *around], source)
    forms = dict.fromkeys([written, " ".join(texts), *runs.forms])
    files = _redirected_files([*own, *around], source)
    if stdin is not None:  # `cat g.sh | sh` reads g.sh as `sh < g.sh` does
        files += tuple(("read", file) for file in stdin.files)
    walk.commands.append(
        ShellCommand(written, tuple(forms), runs.hidden, opaque, files, walk.inside)
    )
    for script in runs.scripts:
        _walk_nested(script, walk, written)


class _Joined(NamedTuple):
    """Nodes the grammar read as words of their own with nothing between them: bash
    reads them as one (`a[\\$\\(x\\)]` is split in two by tree-sitter-bash 0.25)."""

    children: list[Node]
    type: str = "concatenation"

    @property
    def start_byte(self) -> int:
        return self.children[0].start_byte

    @property
    def end_byte(self) -> int:
        return self.children[-1].end_byte


def _words(nodes: list[Node]) -> list[Node]:
    """`nodes` with each run of touching nodes joined into one word."""
    groups: list[list[Node]] = []
    for node in nodes:
        if groups and groups[-1][-1].end_byte == node.start_byte:
            groups[-1].append(node)
        else:
            groups.append([node])
    return [group[0] if len(group) == 1 else cast("Node", _Joined(group)) for group in groups]


def _add_statement(node: Node, walk: _Walk, source: str) -> None:
    """`PATH=/tmp/evil`, `export PS4='$(rm x)'`, `unset x`: a command of its own."""
    text = node_text(node, source)
    assignments = [node] if node.type == "variable_assignment" else [
        child for child in node.children if child.type == "variable_assignment"
    ]  # fmt: skip
    runs, opaque = Runs(), None
    for assignment in assignments:
        assigned, assigned_opaque = _assignment(assignment, source)
        runs, opaque = runs.plus(assigned), opaque or assigned_opaque
    for child in node.children:
        if child.type not in ("variable_assignment", "variable_name", "word") and (
            child.is_named and literal(child, source) is None
        ):
            opaque = opaque or f"{BUILT_AT_RUN_TIME} ({node_text(child, source)})"
    if node.type == "declaration_command":  # `declare -n r=PS4`, `declare PS4`
        named = [child for child in node.children if child.type != "variable_assignment"]
        words = [
            node_text(child, source) if child.type == "variable_name" else literal(child, source)
            for child in named[1:]
        ]
        why = assigned_by_command(node_text(named[0], source), words)
        runs = runs.plus(Runs(hidden=why))
        opaque = opaque or why
    walk.commands.append(
        ShellCommand(text, (text,), runs.hidden, opaque or runs.hidden, inside=walk.inside)
    )
    for script in runs.scripts:
        _walk_nested(script, walk, text)


def _assignment(node: Node, source: str) -> tuple[Runs, str | None]:
    """What `NAME=value` makes run, and why it is not literal, if it is not."""
    name_node = node.children[0]
    value_node = node.children[-1] if len(node.children) > 2 else None
    value = "" if value_node is None else literal(value_node, source)
    runs = assignment_runs(node_text(name_node, source), value)
    opaque = None
    if name_node.type != "variable_name":
        opaque = f"{BUILT_AT_RUN_TIME} ({node_text(name_node, source)})"
    elif value is None and value_node is not None:
        opaque = f"{BUILT_AT_RUN_TIME} ({node_text(value_node, source)})"
    return runs, opaque or runs.hidden


def _stdin(node: Node, own: list[Node], around: tuple[Node, ...], source: str) -> Stdin | None:
    """What the command's standard input holds: its own redirect, else a pipe, else
    a redirect of the statement around it; None: the tool's own."""
    fed = _stdin_of(own, source)
    if fed is not None:
        return fed
    previous = node.prev_sibling
    if previous is not None and previous.type in ("|", "|&"):
        catted = _catted(previous.prev_sibling, source) if previous.type == "|" else ()
        return Stdin(None, "a pipe", catted)
    return _stdin_of(list(around), source)


def _catted(node: Node | None, source: str) -> tuple[str, ...]:
    """The files a plain `cat FILE…` writes into the pipe after it (`cat g.sh | sh`);
    none where it is anything else (an option, `-`, a word built at run time, a
    redirect of its own, another program)."""
    if node is None or node.type != "command":
        return ()
    parts = [child for child in node.children if child.type != "variable_assignment"]
    if any(part.type.endswith("_redirect") for part in parts):
        return ()
    values = [literal(word, source) for word in _words(parts)]
    if values[:1] != ["cat"]:
        return ()
    files = values[2:] if values[1:2] == ["--"] else values[1:]
    if not files or any(file is None or file.startswith("-") for file in files):
        return ()
    return tuple(cast("list[str]", files))


def _stdin_of(redirects: list[Node], source: str) -> Stdin | None:
    fed = None
    for redirect in redirects:
        operators = [child.type for child in redirect.children]
        if redirect.type == "herestring_redirect":
            fed = Stdin(literal(redirect.children[-1], source), "a here-string")
        elif redirect.type == "heredoc_redirect":
            fed = Stdin(_heredoc_text(redirect, source), "a here-doc")
        elif redirect.type == "file_redirect" and ("<" in operators or "<&" in operators):
            descriptor = next((c for c in redirect.children if c.type == "file_descriptor"), None)
            if descriptor is None or node_text(descriptor, source) == "0":
                fed = Stdin(None, f"{node_text(redirect, source)!r}")
    return fed


def _heredoc_text(redirect: Node, source: str) -> str | None:
    """A here-doc's text, or None where it expands something at run time."""
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
    if body is None:
        return ""
    text = source[body.start_byte : body.end_byte]
    if start is not None and node_text(start, source)[:1] in ("'", '"', "\\"):
        return text
    if any(child.is_named for child in body.children):
        return None  # `$x`, `$(…)` in an unquoted here-doc
    return re.sub(r"\\([$`\\])", r"\1", text.replace("\\\n", ""))


def _redirected_files(redirects: list[Node], source: str) -> tuple[tuple[str, str], ...]:
    """The literal files `redirects` read and write, in order."""
    files = []
    for redirect in redirects:
        value = literal(redirect.children[-1], source)
        if redirect.type != "file_redirect" or value is None or value in _HARMLESS_TARGETS:
            continue
        operators = {child.type for child in redirect.children}
        if ">&" in operators and (value.isdigit() or value == "-"):
            continue  # `2>&1`, `>&-`: a descriptor, not a file
        if operators & _WRITES or ">&" in operators:
            files.append(("write", value))
        elif "<" in operators:
            files.append(("read", value))
    return tuple(files)


def _redirect_problem(redirects: list[Node], source: str) -> str | None:
    """Why these redirects are more than plain reads and writes to /dev/null, if so."""
    for redirect in redirects:
        target = redirect.children[-1]
        if redirect.type == "heredoc_redirect":
            if _heredoc_text(redirect, source) is None:
                return f"{BUILT_AT_RUN_TIME} (a here-doc that expands)"
            continue
        value = literal(target, source)
        if value is None:
            return f"{BUILT_AT_RUN_TIME} ({node_text(redirect, source)})"
        if redirect.type != "file_redirect":
            continue
        operators = {child.type for child in redirect.children}
        duplicates = ">&" in operators and (value.isdigit() or value == "-")
        writes = bool(operators & _WRITES) or (">&" in operators and not duplicates)
        if writes and value not in _HARMLESS_TARGETS:
            return f"it writes to a file through a redirect ({node_text(redirect, source)})"
        if value.startswith(_NETWORK_FILES):
            return (
                f"it opens a network connection through a redirect ({node_text(redirect, source)})"
            )
    return None
