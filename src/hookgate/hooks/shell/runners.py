"""The commands that run code of their own beyond their name, one function each, and
the table that names them (`RUNNERS`): a shell's `-c` string, script or input,
`eval`, `source`, `trap`, `alias`, `mapfile -C`, `script -c`, `watch`, `ssh`, `find
-exec`, … Each reads its arguments (None where built at run time) and its standard
input, and says what it runs as a `Runs`; `code.commands_run` calls them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hookgate.hooks.records import NamedTuple

#: Where `find -exec`, `xargs -I` and `parallel` put their input into a command.
PLACEHOLDER = "{}"

#: Shells (and `su`-likes) whose `-c STRING`, script file or standard input is code.
SHELLS = frozenset({
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "oksh",
    "loksh", "pdksh", "fish", "csh", "tcsh", "pwsh", "nu", "xonsh", "elvish", "su",
    "runuser",
})  # fmt: skip
#: A shell's options that take the next word as their value.
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
#: `find` actions that run the command after them, up to `;` or `+`.
FIND_EXECUTES = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
#: Files that are a command's own standard input: `source /dev/stdin <<< '…'`.
STDIN_FILES = frozenset({"/dev/stdin", "/proc/self/fd/0", "/dev/fd/0", "-"})
#: Start points of the commands one `find` runs that are followed; past it, unknown.
MAX_EXECUTED = 64


class Stdin(NamedTuple):
    """What a command's standard input holds, where it could be code."""

    text: str | None
    """The literal text (a here-string, a here-doc), or None: known only at run time."""
    source: str
    """Where it comes from, in words: "a pipe", "the file x", "a here-doc"."""
    files: tuple[str, ...] = ()
    """The files it is the content of, as written, where the line names them: those a
    `cat` reads into the pipe (`cat g.sh | sh`)."""


class Runs(NamedTuple):
    """What one command runs: see `commands_run`."""

    forms: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    """Literal command lines it makes a shell run: parse and judge each."""
    hidden: str | None = None
    """Why what it runs is not known before it runs (None: it is)."""
    commands: tuple[tuple[str | None, ...], ...] = ()
    """Commands it runs given as words (`find -exec rm {} +`), `PLACEHOLDER` where it
    puts its input: `commands_run` judges each in turn."""

    def plus(self, other: Runs) -> Runs:
        return Runs(
            self.forms + other.forms, self.scripts + other.scripts, self.hidden or other.hidden,
            self.commands + other.commands,
        )  # fmt: skip


def base_name(word: str) -> str:
    """`/bin/rm` and `./rm` name `rm`."""
    return word.rstrip("/").rsplit("/", 1)[-1] or word


def _shell(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """`bash -c STRING`, `bash FILE`, or `bash` reading its standard input."""
    if name in ("su", "runuser"):
        return _su(name, args, stdin)
    command_string = reads_stdin = False
    index = 0
    while index < len(args):
        word = args[index]
        if word is None:
            break  # a plain argument: the command line or the script, built at run time
        if word in ("--", "-"):
            index += 1
            break
        if word in _SHELL_VALUE_OPTIONS or (word[:1] in "-+" and word[-1:] in "oO" and
                                            not word.startswith("--")):  # fmt: skip
            index += 2
            continue
        if not word.startswith(("-", "+")) or len(word) == 1:
            break
        if not word.startswith("--"):
            command_string = command_string or "c" in word
            reads_stdin = reads_stdin or "s" in word
        index += 1
    rest = args[index:]
    if command_string:
        return _code(f"{name} -c", rest[0] if rest else None)
    if rest and not reads_stdin:
        file = "a file named at run time" if rest[0] is None else f"the file {rest[0]!r}"
        return Runs(hidden=f"{name} runs the commands of {file}, which no rule can read")
    return from_stdin(name, stdin)


def _su(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    for index, word in enumerate(args):
        if word is None:
            return Runs(hidden=f"{name} is given an argument built at run time")
        if word in ("-c", "--command", "--session-command"):
            return _code(f"{name} -c", args[index + 1] if index + 1 < len(args) else None)
        if word.startswith(("--command=", "--session-command=")):
            return _code(f"{name} -c", word.split("=", 1)[1])
        if word.startswith("-c") and len(word) > 2:
            return _code(f"{name} -c", word[2:])
    return from_stdin(name, stdin)


def from_stdin(name: str, stdin: Stdin | None) -> Runs:
    """What a shell `name` reading its standard input runs: the literal text fed to it,
    else unknown."""
    if stdin is None:
        return Runs(hidden=f"{name} reads the commands it runs from its standard input")
    if stdin.text is None:
        return Runs(hidden=f"{name} reads the commands it runs from {stdin.source}, "
                    "which no rule can read")  # fmt: skip
    return Runs(scripts=(stdin.text,))


def _code(what: str, script: str | None) -> Runs:
    if script is None:
        return Runs(hidden=f"{what} runs a command line built at run time")
    return Runs(scripts=(script,))


def _eval(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    if None in args:
        return Runs(hidden="eval runs a command line built at run time")
    return Runs(scripts=(" ".join(a for a in args if a is not None),))


def _source(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    if not args:
        return Runs()
    file = args[0]
    if file is None:
        return Runs(hidden=f"{name} runs the commands of a file named at run time")
    if file in STDIN_FILES:
        return from_stdin(name, stdin)
    return Runs(hidden=f"{name} runs the commands of the file {file!r}, which no rule can read")


def _trap(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    words = [a for a in args if a != "--"]
    if not words or words[0] in ("-l", "-p", "-P") or len(words) == 1:
        return Runs()
    return Runs() if words[0] in ("-", "") else _code("trap", words[0])


def _alias(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """An alias may stand for any command name after it (`alias echo=` makes `echo rm
    x` run `rm x`, `alias cat='command '` even the word after it): a definition makes
    what the rest of the line runs unknown."""
    if any(word is None or "=" in word for word in args):
        return Runs(hidden="alias makes the command names after it stand for other commands")
    return Runs()


def _option_code(
    *options: str, called: bool = False
) -> Callable[[str, list[str | None], Stdin | None], Runs]:
    """A command whose option (`mapfile -C CODE`, `script -qc CODE`) is a command line;
    `called`: the code is called with arguments after it (`mapfile -C rm` runs `rm 0 a`)."""

    def runs(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
        found = Runs()
        for index, word in enumerate(args):
            following = args[index + 1] if index + 1 < len(args) else None
            for option in options if word is not None else ():
                given, value = _option_value(word or "", option, following)
                if given and called and value is not None:
                    value = f"{value} {PLACEHOLDER}"
                if given:
                    found = found.plus(_code(f"{name} {option}", value))
        return found

    return runs


def _option_value(word: str, option: str, following: str | None) -> tuple[bool, str | None]:
    """Whether `word` gives `option` (`-c X`, `-qcX`, `--command=X`), and its value."""
    if option.startswith("--"):
        if word == option:
            return True, following
        return word.startswith(option + "="), word.partition("=")[2]
    if word.startswith("--") or not word.startswith("-") or option[1] not in word[1:]:
        return False, None
    rest = word[word.index(option[1], 1) + 1 :]
    return True, rest or following


def _script(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """`script -c CODE file`; without `-c` it runs a shell reading its standard input."""
    runs = _option_code("-c", "--command")(name, args, stdin)
    return runs if runs.scripts or runs.hidden else from_stdin(name, stdin)


def _joined(what: str, words: Sequence[str | None]) -> Runs:
    """A command given as words that a shell runs joined (`watch`, `ssh`, `sg`)."""
    if None in words:
        return Runs(hidden=f"{what} runs a command line built at run time")
    return Runs(scripts=(" ".join(w for w in words if w is not None),)) if words else Runs()


def _after_options(args: list[str | None], takes_value: str, first: int = 0) -> int:
    """The index of the first plain word past `first` options (`-n 5`, `-q`, `--x=y`)."""
    index = 0
    while index < len(args):
        word = args[index]
        if word is None or not word.startswith("-") or word == "-":
            break
        index += 1
        if word == "--":
            break
        if len(word) == 2 and word[1] in takes_value:
            index += 1
    return index + first


def _watch(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    return _joined(name, args[_after_options(args, "ndq") :])


def _ssh(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    rest = args[_after_options(args, "BbcDEeFIiJLlmOopQRSWw") :]
    if len(rest) <= 1:  # a remote shell reading this side's standard input
        return from_stdin(name, stdin)
    return _joined(name, rest[1:])


def _sg(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    rest = [word for word in args[1:] if word != "-c"]
    return _joined(name, rest) if rest else from_stdin(name, stdin)


def _at(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    if "-f" in args or any(word is None for word in args):
        return Runs(hidden=f"{name} runs the commands of a file later")
    if "-l" in args or "-r" in args or "-d" in args:
        return Runs()
    return from_stdin(name, stdin)


def _parallel(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    markers = [i for i, word in enumerate(args) if word in (":::", "::::", ":::+", "::::+")]
    end = markers[0] if markers else len(args)
    command = args[_after_options(args[:end], "jSPNnLEIdaC") : end]
    if not command:
        return Runs(hidden="parallel runs each line of its input as a command")
    if None in command or any(PLACEHOLDER in (word or "") for word in command[:1]):
        return Runs(hidden="parallel builds its command from its input")
    if not any(PLACEHOLDER in (word or "") for word in command):
        command = [*command, PLACEHOLDER]  # it adds each input after the command
    return _joined(name, command)


def _find(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """`find . -exec rm {} +`: each executed command, read as a command of its own."""
    starts = [i + 1 for i, word in enumerate(args) if word in FIND_EXECUTES]
    if len(starts) > MAX_EXECUTED:
        return Runs(hidden="it runs more commands than hookgate follows")
    commands = []
    for start in starts:
        end = next((i for i in range(start, len(args)) if args[i] in (";", "+")), len(args))
        if end > start:
            commands.append(tuple(args[start:end]))
    return Runs(commands=tuple(commands))


def _flock(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """`flock FILE -c CODE`, or `flock FILE COMMAND…` (a wrapper then)."""
    runs = _option_code("-c", "--command")(name, args, stdin)
    if runs.scripts or runs.hidden:
        return runs
    rest = args[_after_options(args, "wEn") + 1 :]
    return Runs(commands=(tuple(rest),)) if rest else Runs()


def _hidden(why: str) -> Callable[[str, list[str | None], Stdin | None], Runs]:
    def runs(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
        return Runs(hidden=f"{name} {why}")

    return runs


def _hash(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """`hash -p /bin/rm ls` makes `ls` run `rm` for the rest of the line."""
    if any(word is None or (word.startswith("-") and "p" in word) for word in args):
        return Runs(hidden="hash -p points a command name at another program")
    return Runs()


def _sudo_shell(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """`sudo -s` and `sudo -i` alone start a shell on the standard input; with a
    command after them, the shell runs it as `$SHELL -c` code."""
    end = _after_options(args, "ugpCDhrtTU")
    options = [word for word in args[:end] if word is not None]
    if not any(
        word in ("--shell", "--login") or (word[:2] != "--" and ("s" in word or "i" in word))
        for word in options
    ):
        return Runs()
    rest = args[end:]
    return _joined(f"{name} -s", rest) if rest else from_stdin(name, stdin)


def _capsh(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """`capsh … -- ARGS` runs bash with ARGS (`capsh -- -c 'rm x'`)."""
    if "--" not in args:
        return Runs()
    return _shell("bash", args[args.index("--") + 1 :], stdin)


def _newgrp(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """`newgrp [GROUP]` starts a shell on the standard input."""
    return from_stdin(name, stdin)


#: The commands that run code of their own beyond their name, by name.
RUNNERS: dict[str, Callable[[str, list[str | None], Stdin | None], Runs]] = {
    **dict.fromkeys(SHELLS, _shell),
    "eval": _eval, "source": _source, ".": _source, "trap": _trap, "alias": _alias,
    "mapfile": _option_code("-C", called=True), "readarray": _option_code("-C", called=True),
    "compgen": _option_code("-C", called=True), "complete": _option_code("-C", called=True),
    "script": _script, "hash": _hash, "crontab": _hidden("installs commands that run later"),
    "tmux": _hidden("runs commands in a terminal of its own"),
    "screen": _hidden("runs commands in a terminal of its own"),
    "expect": _hidden("runs the commands of a script of its own"),
    "flock": _flock, "watch": _watch, "ssh": _ssh, "sg": _sg,
    "at": _at, "batch": _at, "parallel": _parallel, "find": _find,
    "bind": _hidden("binds keys to commands"), "enable": _hidden("may load a builtin from a file"),
    "fc": _hidden("runs commands from the history"), "sudo": _sudo_shell, "doas": _sudo_shell,
    "capsh": _capsh, "newgrp": _newgrp,
}  # fmt: skip
