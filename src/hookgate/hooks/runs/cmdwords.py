"""The words of each command a hook's line runs, as the shell would read them.

`commands_of` splits a line into commands (a line of plain words, `"$CLAUDE_PROJECT_DIR"`
among them, without a parser; any other with `hookgate.hooks.shell.words`, a leaf module that imports nothing of hookgate,
loaded then) and each command into words, quotes removed, a substitution kept whole.
`expand_known` reads the variables whose value the runner sets; `past_wrappers` skips
`exec`, `timeout 5`, `env X=1`. `whatruns` builds on these.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

#: A line of these characters alone is one command of literal words in every shell.
_PLAIN_LINE = re.compile(r"[A-Za-z0-9_./:=+,@% -]*")
#: The same, double quotes allowed: what `_KNOWN_VARS` leaves of a line that names them.
_QUOTED_PLAIN_LINE = re.compile(r'[A-Za-z0-9_./:=+,@% "-]*')
_KNOWN_VARS = re.compile(r"\$(?:\{(?:CLAUDE_PROJECT_DIR|PWD)\}|(?:CLAUDE_PROJECT_DIR|PWD)\b)")
#: The variables the resolver reads as the shell would: the project and the directory.
_PROJECT_VARS = re.compile(r"\$(?:\{CLAUDE_PROJECT_DIR\}|CLAUDE_PROJECT_DIR\b)")
_PWD_VARS = re.compile(r"\$(?:\{PWD\}|PWD\b)")
#: A command substitution without one nested in it: `$(…)` or `` `…` ``.
_SUBSTITUTION = re.compile(r"\$\([^()]*\)|`[^`]*`")
_HELD = re.compile("\x01(\\d+)\x01")
#: How a script names its own folder: `$(dirname "$0")`, `$(dirname -- "${BASH_SOURCE[0]}")`,
#: `${0%/*}`; then `$(cd "…" && pwd)` around one of them.
_DIRNAME = re.compile(
    r"""\$\(\s*dirname\s+(?:--\s+)?(["']?)\$(?:0|\{0\}|BASH_SOURCE|\{BASH_SOURCE(?:\[0\])?\})\1\s*\)"""
    r"|\$\{0%/\*\}"
)
_CD_PWD = re.compile(
    r"""\$\(\s*(?:builtin\s+)?cd\s+(?:(?:--|-P|-L)\s+)*(["']?)\x02\1(?:\s*[12]?>\s*/dev/null|\s*2>&1)*"""
    r"\s*(?:&&|;)\s*pwd(?:\s+-[PL])?\s*\)"
)
#: The name `parsecache` keeps a script's commands under; changes with their form.
SCRIPT_FORMAT = "shell-commands-v2"
#: Marks a file a command reads by a redirect, among its words (no word holds NUL).
STDIN = "\x00<"
#: Marks why what a command runs is not known before it runs (the parser's `hidden`).
UNKNOWN = "\x00?"
#: Wrappers' long options that take the next word as their value (`env --chdir sub`).
_LONG_VALUES = {
    "env": ("--chdir", "--split-string", "--unset"),
    "timeout": ("--signal", "--kill-after"),
    "xargs": ("--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines",
              "--max-chars", "--process-slot-var"),
    "sudo": ("--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type",
             "--close-from", "--other-user"),
    "nice": ("--adjustment",),
    "stdbuf": ("--input", "--output", "--error"),
}  # fmt: skip
#: Wrappers' options whose value is the directory the command runs in.
_CHDIR_OPTIONS = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir")}
#: `NAME=value`, a variable set for one command.
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def commands_of(line: str) -> list[list[str]] | None:
    """Each command `line` runs, as words, then each file it reads by a redirect, marked
    by `STDIN` (`bash < g.sh`: `["bash", STDIN + "g.sh"]`), and why what it runs is
    not known before it runs, if so, marked by `UNKNOWN` (`bash < "$X"`); None where
    the shell parser cannot read it."""
    if _PLAIN_LINE.fullmatch(line):
        return [line.split()]  # what the parser would say, without loading it
    if _QUOTED_PLAIN_LINE.fullmatch(_KNOWN_VARS.sub("v", line)) and line.count('"') % 2 == 0:
        # Claude Code's own idiom, `"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh`: one command
        # of words, double quotes grouping plain characters and the variables read here.
        words = split_words(line)
        return None if words is None else [words]
    from hookgate.hooks.shell.words import parse_command_line  # the bash grammar

    parsed = parse_command_line(line)
    if parsed is None:
        return None
    commands = []
    for command in parsed.commands:
        words = split_words(command.written)
        if words is None:
            return None
        reads = dict.fromkeys(path for kind, path in command.redirected if kind == "read")
        unknown = [] if command.hidden is None else [UNKNOWN + command.hidden]
        commands.append([*words, *(STDIN + path for path in reads), *unknown])
    return commands


def commands_of_script(text: str) -> list[list[str]] | None:
    """`commands_of` a shell script's whole text, parsed once per text: `parsecache`
    keeps the words (`hookgate hook` reads a hook's script at every event)."""
    from hookgate.hooks.files import parsecache

    found, kept = parsecache.recall(SCRIPT_FORMAT, text)
    commands: list[list[str]] | None = kept
    if found and (commands is None or _is_commands(commands)):
        return commands
    commands = commands_of(text)
    parsecache.keep(SCRIPT_FORMAT, text, commands)
    return commands


def _is_commands(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(words, list) and all(isinstance(word, str) for word in words) for words in value
    )


def split_words(text: str) -> list[str] | None:
    """The words of one command as written, quotes removed; a `$( )` or backquoted
    substitution stays whole inside its word (`./$(echo y).sh`), as the shell reads it."""
    held: list[str] = []

    def hold(match: re.Match[str]) -> str:
        held.append(match.group(0))
        return f"\x01{len(held) - 1}\x01"

    while (collapsed := _SUBSTITUTION.sub(hold, text)) != text:  # innermost first
        text = collapsed
    try:
        words = shlex.split(text, comments=False)
    except ValueError:
        return None

    def restore(word: str) -> str:
        while "\x01" in word:
            word = _HELD.sub(lambda m: held[int(m.group(1))], word)
        return word

    return [restore(word) for word in words]


def without_substitutions(word: str) -> str:
    """`word` less its `$( )` and backquoted parts: their commands are read on their own."""
    while (shorter := _SUBSTITUTION.sub("", word)) != word:
        word = shorter
    return word


def expand_known(word: str, cwd: Path, base_dir: Path) -> str:
    """`word` with the variables whose value the runner sets read as the shell would:
    `$CLAUDE_PROJECT_DIR` (`base_dir`) and `$PWD` (`cwd`)."""
    if "$" not in word:
        return word
    word = _PROJECT_VARS.sub(lambda _: str(base_dir), word)
    return _PWD_VARS.sub(lambda _: str(cwd), word)


def own_folder(word: str, folder: Path) -> str:
    """`word` of a script in `folder`, with the script's ways of naming its own folder
    read as the shell would (`$(dirname "$0")/lib.sh`: `folder/lib.sh`)."""
    if "0" not in word and "BASH_SOURCE" not in word:
        return word
    marked = _DIRNAME.sub("\x02", word)
    if marked == word:
        return word
    marked = _CD_PWD.sub("\x02", marked)
    return marked.replace("\x02", str(folder))


def past_wrappers(words: list[str]) -> list[str]:
    """`words` from the command a wrapper runs on (`exec ./g.sh`, `timeout 5 ./g.sh`)."""
    return _wrappers(words)[0]


def wrapper_settings(wrappers: Sequence[str]) -> tuple[list[str], str | None]:
    """What the options of `wrappers` (the words `past_wrappers` skips) change about
    the command they run: the directories it runs in, each from the one before (`env
    -C sub`, `sudo -D sub`), and the words of `env -S 'sh g.sh'`, if any."""
    chdirs: list[str] = []
    split: str | None = None
    for name, option, value in _wrappers(wrappers)[1]:
        if option in _CHDIR_OPTIONS.get(name, ()):
            chdirs.append(value)
        elif name == "env" and option in ("-S", "--split-string"):
            split = value
    return chdirs, split


def xargs_replace(wrappers: Sequence[str]) -> str | None:
    """The string an `xargs` among `wrappers` puts its input in place of (`-I {}`,
    `-i`: `{}`), "" where it adds its input as arguments; None with no `xargs`."""
    if not any(os.path.basename(word) == "xargs" for word in wrappers):
        return None
    options = [(option, value) for name, option, value in _wrappers(wrappers)[1] if name == "xargs"]
    replace = ""
    for option, value in options:
        if option in ("-I", "--replace"):
            replace = value or "{}"
        elif option == "-i":
            replace = "{}"
    return replace


def xargs_files(wrappers: Sequence[str]) -> list[str]:
    """The files an `xargs` among `wrappers` reads its input from (`-a F`, `--arg-file`)."""
    return [value for name, option, value in _wrappers(wrappers)[1]
            if name == "xargs" and option in ("-a", "--arg-file") and value]  # fmt: skip


def _wrappers(words: Sequence[str]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """`words` past their wrappers, and each wrapper option read on the way: the
    wrapper, the option (`-C`, `--chdir`), its value ("" for one that takes none)."""
    from hookgate.hooks.shell.code import WRAPPERS  # a plain table: no parser loaded

    read: list[tuple[str, str, str]] = []
    while words and (name := os.path.basename(words[0])) in WRAPPERS:
        takes_value, positional = WRAPPERS[name]
        index = 1
        while index < len(words) and words[index].startswith("-"):
            taken = _wrapper_option(words, index, takes_value, _LONG_VALUES.get(name, ()))
            read.extend((name, option, value) for option, value in taken[1])
            index += taken[0]
        while index < len(words) and ASSIGNMENT.match(words[index]):
            index += 1
        words = words[index + positional :]
    return list(words), read


def _wrapper_option(
    words: Sequence[str], index: int, takes_value: str, long_values: tuple[str, ...]
) -> tuple[int, list[tuple[str, str]]]:
    """The wrapper option at `index`: how many words it takes, and the options it
    holds with their values (`-iS 'sh g'`: `-i`, then `-S` with `sh g`)."""
    word = words[index]
    following = words[index + 1] if index + 1 < len(words) else ""
    if word.startswith("--"):
        option, equals, value = word.partition("=")
        if option in long_values and not equals:
            return 2, [(option, following)]
        return 1, [(option, value)]
    held: list[tuple[str, str]] = []
    for position in range(1, len(word)):
        option = "-" + word[position]
        if word[position] in takes_value:
            value = word[position + 1 :]
            held.append((option, value or following))
            return (1 if value else 2), held
        held.append((option, ""))
    return 1, held
