"""How an interpreter or a task runner reads its options, one small grammar per family.

`python3 -Bm hooks.guard`, `python3 -mhooks.guard`, `node --require=./x.js g.js`,
`perl -Itools g.pl`, `make -ftools.mk -C sub guard`: short options cluster (`-Bm`), a
value may be attached (`-mX`, `-fX`) or the next word, a long option's value may follow
`=`. `read_options` says, for one command's words, which word is the script, the code
or module an option gives, the files and directories it loads code from, the directory
it changes to, whether it reads its script on stdin, and the options it does not know
(one could take the next word, or hide code: `whatruns` lists them as not pinned rather
than guess). Standard library only: read by `whatruns` for every hook.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from hookgate.hooks.records import NamedTuple


class Grammar(NamedTuple):
    """One family's options, each named with its dash (`-m`, `--require`)."""

    flags: str
    """Short options without a value, which cluster (`-Bsu`); `*`: every letter else."""
    values: frozenset[str]
    """Options that take a value (attached, after `=`, or the next word), besides the
    ones below, which all take one."""
    attached: frozenset[str] = frozenset()
    """Short options whose value, optional, can only be attached (`perl -i.bak`)."""
    code: frozenset[str] = frozenset()
    """Options whose value is code (`-c`, `--eval`)."""
    module: frozenset[str] = frozenset()
    """Options whose value is a module run as the script (`python3 -m pkg`)."""
    files: frozenset[str] = frozenset()
    """Options whose value is a file of code (or of settings naming code) loaded."""
    dirs: frozenset[str] = frozenset()
    """Options whose value is a directory code is loaded from (`perl -I lib`)."""
    chdir: frozenset[str] = frozenset()
    """Options whose value is the directory it runs in (`make -C sub`, `ruby -C sub`)."""
    hidden: frozenset[str] = frozenset()
    """Options whose value is code or settings this reads no further (`make --eval`)."""
    long_flags: frozenset[str] | None = None
    """Long options without a value; None: any long option not above is one."""
    shell: bool = False
    """A shell: `-c` makes the first operand the code; `-s`, stdin the script; `+o`."""


class Options(NamedTuple):
    """What one command's options say (`read_options`)."""

    operand: int | None = None
    """The index of the first operand: the script (the code, for a shell's `-c`); none
    where the script is stdin (`bash -s -- a`: `a` is an argument)."""
    positional: tuple[int, ...] = ()
    """The indexes of every operand (a task runner's tasks)."""
    code: str | None = None
    module: str | None = None
    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    chdir: tuple[str, ...] = ()
    stdin: bool = False
    """The script is read from stdin (`python3 -`, `bash -s`)."""
    shell_code: bool = False
    """A shell's `-c`: the operand is the code."""
    unknown: tuple[str, ...] = ()
    """Options the grammar does not know, or whose code is not read."""


_SHELL = Grammar(
    "*",
    frozenset({"-o", "-O", "+o", "+O"}),
    files=frozenset({"--rcfile", "--init-file"}),
    long_flags=None,
    shell=True,
)
_PYTHON = Grammar(
    "bBdEhiIOPqsSuvVxR?",
    frozenset({"-W", "-X", "--check-hash-based-pycs"}),
    code=frozenset({"-c"}),
    module=frozenset({"-m"}),
    long_flags=frozenset({"--help", "--version", "--help-env", "--help-xoptions",
                          "--help-all"}),
)  # fmt: skip
_NODE = Grammar(
    "hvic",
    frozenset({"-C", "--conditions", "--input-type", "--title", "--inspect-port",
               "--redirect-warnings", "--icu-data-dir", "--diagnostic-dir", "--report-dir",
               "--report-directory", "--report-filename", "--report-signal",
               "--unhandled-rejections", "--watch-path", "--dns-result-order",
               "--disable-warning", "--heapsnapshot-signal", "--max-http-header-size",
               "--test-reporter", "--test-reporter-destination", "--test-name-pattern",
               "--secure-heap", "--secure-heap-min", "--stack-trace-limit"}),
    code=frozenset({"-e", "--eval", "-p", "--print"}),
    files=frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader",
                     "--env-file", "--env-file-if-exists", "--experimental-policy",
                     "--openssl-config", "--experimental-config-file", "--snapshot-blob"}),
)  # fmt: skip
_RUBY = Grammar(
    "acdlnpsSUvwWyh",
    frozenset({"-E", "-F", "--encoding", "--external-encoding", "--internal-encoding",
               "--enable", "--disable", "--dump", "--backtrace-limit", "--crash-report"}),
    attached=frozenset({"-0", "-i", "-x", "-T", "-K", "-W"}),
    code=frozenset({"-e"}),
    files=frozenset({"-r"}),
    dirs=frozenset({"-I"}),
    chdir=frozenset({"-C"}),
)  # fmt: skip
_PERL = Grammar(
    "acnpsStTuUvwWXh",
    frozenset({"-M", "-m"}),  # a module from `@INC`: its `-I` folders are pinned
    attached=frozenset({"-0", "-i", "-x", "-l", "-C", "-d", "-D"}),
    code=frozenset({"-e", "-E"}),
    dirs=frozenset({"-I"}),
    long_flags=frozenset({"--help", "--version"}),
)  # fmt: skip
_PHP = Grammar(
    "hvilsanqHemw",
    frozenset({"-B", "-R", "-F", "-E", "-t", "-S", "--rf", "--rc", "--re", "--ri", "--rz"}),
    code=frozenset({"-r"}),
    files=frozenset({"-f", "-c", "-z"}),
    hidden=frozenset({"-d", "--define"}),  # `-d auto_prepend_file=x` runs x first
    long_flags=frozenset({"--help", "--version", "--info", "--ini", "--no-php-ini",
                          "--modules", "--syntax-check", "--interactive"}),
)  # fmt: skip
_LUA = Grammar(
    "ivEW",
    frozenset(),
    code=frozenset({"-e"}),
    hidden=frozenset({"-l"}),  # a module found on `package.path`
)
#: The option grammar of each interpreter family; another reads as `_GENERIC`.
INTERPRETER_GRAMMARS: dict[str, Grammar] = {
    **dict.fromkeys(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish"), _SHELL),
    **dict.fromkeys(("node", "nodejs"), _NODE),
    "ruby": _RUBY,
    "perl": _PERL,
    "php": _PHP,
    "lua": _LUA,
}
#: An interpreter without a grammar here: every option a flag, but these.
_GENERIC = Grammar(
    "*",
    frozenset({"-o", "-O", "+o", "+O", "-W", "-X", "-I", "--loader"}),
    code=frozenset({"-c", "-e", "-E", "-p", "--eval", "--print"}),
    module=frozenset({"-m"}),
    files=frozenset({"-r", "--require", "--import", "--rcfile", "--init-file"}),
)  # fmt: skip
#: Attached values that are a number alone, the cluster going on after it (`perl -lne`).
_NUMBER_VALUED = frozenset({"-l", "-0", "-T", "-W"})
#: The names Python interpreters go by (`python3.11`, `pypy3`).
PYTHON_NAME = re.compile(r"python(3(\.\d+)?)?|pypy3?")

_MAKE = Grammar(
    "*",
    frozenset({"-o", "--old-file", "--assume-old", "-W", "--what-if",
               "--new-file", "--assume-new", "-l", "--load-average", "-O", "--output-sync",
               "--debug", "--jobserver-style", "--jobserver-auth"}),
    attached=frozenset({"-j", "-O"}),
    files=frozenset({"-f", "--file", "--makefile"}),
    dirs=frozenset({"-I", "--include-dir"}),  # where an `include` is looked for next
    chdir=frozenset({"-C", "--directory"}),
    hidden=frozenset({"-E", "--eval"}),
)  # fmt: skip
_NPM = Grammar(
    "*",
    frozenset({"-w", "--workspace", "--loglevel", "--registry", "--cache", "--tag",
               "--otp", "--scope", "--include", "--omit", "--before", "--userconfig",
               "--globalconfig", "--script-shell", "--node-options", "--filter", "-F",
               "--reporter", "--workspace-concurrency", "--dir", "-C", "--prefix", "--cwd"}),
    files=frozenset({"--userconfig", "--globalconfig", "--script-shell"}),
    chdir=frozenset({"--prefix", "-C", "--dir", "--cwd"}),
    # A workspace's own `package.json` (by name or folder), or code: not read here.
    hidden=frozenset({"--node-options", "-w", "--workspace"}),
)  # fmt: skip
#: pnpm's: `-w` is `--workspace-root`, `--filter` picks the packages.
_PNPM = _NPM._replace(
    values=_NPM.values - {"-w"}, hidden=frozenset({"--node-options", "--filter", "-F"})
)
_JUST = Grammar(
    "*",
    frozenset({"--set", "--shell", "--shell-arg", "--dotenv-filename", "--dotenv-path",
               "--color", "--dump-format", "--list-heading", "--list-prefix"}),
    files=frozenset({"-f", "--justfile", "--dotenv-path", "--shell"}),
    chdir=frozenset({"-d", "--working-directory"}),
)  # fmt: skip
_TASK = Grammar(
    "*",
    frozenset({"--output", "--sort", "--concurrency", "-C"}),
    files=frozenset({"-t", "--taskfile"}),
    chdir=frozenset({"-d", "--dir"}),
)
#: The option grammar of each task runner: where it runs, the task file it is told.
RUNNER_GRAMMARS: dict[str, Grammar] = {
    "make": _MAKE,
    "gmake": _MAKE,
    "npm": _NPM,
    "pnpm": _PNPM,
    "yarn": _NPM,
    "just": _JUST,
    "task": _TASK,
}


def interpreter_grammar(program: str) -> Grammar:
    """The option grammar of the interpreter `program` (`_GENERIC` for one not known)."""
    name = os.path.basename(program)
    if PYTHON_NAME.fullmatch(name):
        return _PYTHON
    return INTERPRETER_GRAMMARS.get(name, _GENERIC)


def read_options(words: Sequence[str], grammar: Grammar, *, all_operands: bool = False) -> Options:
    """What `words` (a program, then its options and operands) say, by `grammar`:
    options until the first operand (or each operand's, with `all_operands`: a task
    runner's options come anywhere), `--` ending them."""
    found: dict[str, list[str]] = {"code": [], "module": [], "files": [], "dirs": [],
                                   "chdir": [], "unknown": []}  # fmt: skip
    positional: list[int] = []
    stdin = shell_code = False
    index = 1
    while index < len(words):
        word = words[index]
        if word == "--":
            positional.extend(range(index + 1, len(words)) if all_operands else [index + 1])
            break
        if word == "-" or not (word.startswith("-") or (grammar.shell and word[:1] == "+")):
            if word == "-" and not grammar.shell:
                stdin = True  # `python3 -`: the script is stdin, the rest its arguments
                break
            positional.append(index + (word == "-"))
            if not all_operands:
                break
            index += 1
            continue
        taken, letters = _option(words, index, grammar, found)
        shell_code = shell_code or "c" in letters
        stdin = stdin or "s" in letters
        if found["code"] or found["module"]:
            break  # `python3 -c CODE args`: the rest are its arguments
        index += taken
    first = positional[0] if positional and positional[0] < len(words) and not stdin else None
    return Options(
        operand=first,
        positional=tuple(i for i in positional if i < len(words)),
        code=next(iter(found["code"]), None),
        module=next(iter(found["module"]), None),
        files=tuple(found["files"]),
        dirs=tuple(found["dirs"]),
        chdir=tuple(found["chdir"]),
        stdin=stdin,
        shell_code=shell_code,
        unknown=tuple(found["unknown"]),
    )


def _option(
    words: Sequence[str], index: int, grammar: Grammar, found: dict[str, list[str]]
) -> tuple[int, str]:
    """Read the option (or cluster) at `index` into `found`: how many words it takes,
    and the shell letter `c` or `s` where a shell's cluster holds one."""
    word = words[index]
    if word.startswith("--"):
        name, equals, value = word.partition("=")
        if name in _valued(grammar):
            if not equals:
                if index + 1 >= len(words):
                    return 1, ""
                value = words[index + 1]
            _record(grammar, name, value, found)
            return 1 if equals else 2, ""
        if grammar.long_flags is not None and name not in grammar.long_flags:
            found["unknown"].append(word)
        return 1, ""
    letters = ""
    position = 1
    while position < len(word):
        option = "-" + word[position]
        rest = word[position + 1 :]
        if option in grammar.attached and option in _NUMBER_VALUED:
            position += 1 + _number_length(rest)  # `perl -wl0e CODE`
            continue
        if option in grammar.attached:
            _record(grammar, option, rest, found)
            return 1, letters
        if option in _valued(grammar):
            if rest:
                _record(grammar, option, rest, found)
                return 1, letters
            if index + 1 < len(words):
                _record(grammar, option, words[index + 1], found)
            return 2, letters
        if grammar.shell and word[:1] == "-" and option[1] in "cs":
            letters += option[1]
        elif grammar.flags != "*" and option[1] not in grammar.flags:
            found["unknown"].append(word)
            return 1, letters
        position += 1
    return 1, letters


def _number_length(text: str) -> int:
    """How long the number `text` starts with is (`777`, `x1F`)."""
    if text[:1] in ("x", "X"):
        return 1 + len(text[1:]) - len(text[1:].lstrip("0123456789abcdefABCDEF"))
    return len(text) - len(text.lstrip("0123456789"))


def _valued(grammar: Grammar) -> frozenset[str]:
    return (grammar.values | grammar.code | grammar.module | grammar.files | grammar.dirs
            | grammar.chdir | grammar.hidden)  # fmt: skip


def _record(grammar: Grammar, option: str, value: str, found: dict[str, list[str]]) -> None:
    for kind in ("code", "module", "files", "dirs", "chdir"):
        if option in getattr(grammar, kind):
            found[kind].append(value)
    if option in grammar.hidden:
        found["unknown"].append(f"{option} {value}")
