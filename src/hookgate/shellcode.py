"""What one command runs besides itself: `sudo rm x`, `bash -c '…'`, `find -exec`,
`trap '…' EXIT`, a shell fed a here-string, `source /dev/stdin`, `watch`, `script -c`.

`commands_run` reads a command's words (each its literal value, or None where the
shell builds it at run time) and what its standard input holds, and returns the forms
it could run as, the literal command lines it makes a shell run (the caller parses and
judges them like the line itself), and, where it cannot know what will run, why. The
tables are data: a command missing here runs as itself (see docs/security.md).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from typing import NamedTuple

#: Commands that run the command after them, each with its options that take a value
#: and how many plain arguments come before that command (`timeout 5 rm`).
WRAPPERS: dict[str, tuple[str, int]] = {
    "command": ("", 0), "builtin": ("", 0), "exec": ("a", 0), "nohup": ("", 0),
    "time": ("fo", 0), "nice": ("n", 0), "env": ("uCS", 0), "sudo": ("ugpCDhrtTU", 0),
    "doas": ("uC", 0), "timeout": ("sk", 1), "stdbuf": ("ioe", 0), "ionice": ("cnp", 0),
    "setsid": ("", 0), "xargs": ("aEILnPsd", 0), "chrt": ("", 1), "taskset": ("", 1),
    "coproc": ("", 0), "unbuffer": ("", 0), "chroot": ("", 1),
    "busybox": ("", 0), "toybox": ("", 0), "pkexec": ("", 0), "strace": ("eoOpPsSuXU", 0),
    "ltrace": ("eoOpnsSuXU", 0), "unshare": ("", 0), "nsenter": ("tSGu", 0),
    "setpriv": ("", 0), "fakeroot": ("is", 0), "faketime": ("", 1), "firejail": ("", 0),
    "proxychains": ("fq", 0), "proxychains4": ("fq", 0), "torsocks": ("uapP", 0),
    "catchsegv": ("", 0), "valgrind": ("", 0), "systemd-run": ("pEuG", 0),
    "dbus-run-session": ("", 0), "xvfb-run": ("nsfe", 0), "chronic": ("", 0),
    "sem": ("j", 0), "until": ("", 0), "caffeinate": ("tw", 0), "gtimeout": ("sk", 1),
}  # fmt: skip
#: Shells (and `su`-likes) whose `-c STRING`, script file or standard input is code.
SHELLS = frozenset({
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "su",
    "runuser",
})  # fmt: skip
#: A shell's options that take the next word as their value.
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
#: `find` actions that run the command after them, up to `;` or `+`.
FIND_EXECUTES = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
#: Files that are a command's own standard input: `source /dev/stdin <<< '…'`.
STDIN_FILES = frozenset({"/dev/stdin", "/proc/self/fd/0", "/dev/fd/0", "-"})
#: Start points of the wrapper forms of one command; past it the command is unknown
#: (a thousand nested `nohup`s cost quadratic time to list).
MAX_WRAPPED_FORMS = 64
#: Variables whose value the shell or a program runs as a command line later
#: (`PS4='$(rm x)'; set -x`, `GIT_SSH_COMMAND='rm x' git fetch`).
CODE_VARIABLES = frozenset({
    "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "GIT_SSH_COMMAND", "GIT_PAGER",
    "GIT_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_SEQUENCE_EDITOR", "PAGER",
    "MANPAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS",
    "SUDO_ASKPASS", "BROWSER",
})  # fmt: skip
#: Variables whose value names code to load from a file: nothing a rule can read.
FILE_CODE_VARIABLES = frozenset({
    "BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "PYTHONSTARTUP",
    "PERL5OPT", "NODE_OPTIONS", "RUBYOPT", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMANDS",
})  # fmt: skip
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)$", re.DOTALL)
#: Where `find -exec`, `xargs -I` and `parallel` put their input into a command.
PLACEHOLDER = "{}"


class Stdin(NamedTuple):
    """What a command's standard input holds, where it could be code."""

    text: str | None
    """The literal text (a here-string, a here-doc), or None: known only at run time."""
    source: str
    """Where it comes from, in words: "a pipe", "the file x", "a here-doc"."""


class Runs(NamedTuple):
    """What one command runs: see `commands_run`."""

    forms: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    """Literal command lines it makes a shell run: parse and judge each."""
    hidden: str | None = None
    """Why what it runs is not known before it runs (None: it is)."""

    def plus(self, other: Runs) -> Runs:
        return Runs(
            self.forms + other.forms, self.scripts + other.scripts, self.hidden or other.hidden
        )


def commands_run(values: Sequence[str | None], texts: Sequence[str], stdin: Stdin | None) -> Runs:
    """What the command of these words runs, past its wrappers.

    `values`: each word's literal value, None where it is built at run time (an
    expansion, a glob, a brace); `texts`: each word as the forms show it. `stdin`: its
    standard input where a redirect, a here-string or a pipe gives it (None: the tool's).
    """
    start = _principal(values)
    wrapped = _wrapped_forms(values, texts)
    if wrapped is None:
        return Runs(hidden="it nests more wrapper commands than hookgate follows")
    if not values:
        return Runs()
    if start is None:
        built = next((t for v, t in zip(values, texts, strict=True) if v is None), texts[0])
        return Runs(tuple(wrapped), hidden=f"its command name is built at run time ({built})")
    name = base_name(values[start] or "")
    principal = [name, *texts[start + 1 :]]
    runs = Runs((" ".join(principal), *wrapped))
    runs = runs.plus(_assignments_of_env(values[:start]))
    handler = RUNNERS.get(name)
    if handler is not None:
        runs = runs.plus(handler(name, list(values[start + 1 :]), stdin))
    if "xargs" not in (base_name(value or "") for value in values[:start]):
        return runs
    replace = _xargs_replace(values[:start])
    if replace and (replace in principal[0] or any(replace in s for s in runs.scripts)):
        return Runs(runs.forms, hidden=f"xargs puts its input into the command at {replace!r}")
    # It adds words read from its input: `xargs rm` runs `rm` with arguments.
    return Runs((*runs.forms, " ".join([*principal, PLACEHOLDER])), runs.scripts, runs.hidden)


def assignment_runs(name: str, value: str | None) -> Runs:
    """What assigning `value` to the variable `name` makes run later, if anything."""
    if name in CODE_VARIABLES:
        if value is None:
            return Runs(hidden=f"{name} holds a command line built at run time")
        if name.startswith("PS"):  # a prompt: expanded as a double-quoted string is
            return Runs(scripts=(': "' + value.replace('"', '\\"') + '"',))
        return Runs(scripts=(value,))
    if name in FILE_CODE_VARIABLES or name.startswith("BASH_FUNC_"):
        return Runs(hidden=f"{name} makes programs load code from elsewhere")
    return Runs()


def base_name(word: str) -> str:
    """`/bin/rm` and `./rm` name `rm`."""
    return word.rstrip("/").rsplit("/", 1)[-1] or word


def _principal(values: Sequence[str | None]) -> int | None:
    """Where the command that really runs starts, past wrappers; None when not literal."""
    index = 0
    while index < len(values):
        value = values[index]
        if value is None:
            return None
        name = base_name(value)
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


def _wrapped_forms(values: Sequence[str | None], texts: Sequence[str]) -> list[str] | None:
    """After the first wrapper, the words from each plain word on (`sudo -u x rm y`)."""
    first = next(
        (i for i, v in enumerate(values) if v is not None and base_name(v) in WRAPPERS), None
    )
    if first is None:
        return []
    starts = [i for i in range(first + 1, len(texts)) if not texts[i].startswith("-")]
    if len(starts) > MAX_WRAPPED_FORMS:
        return None
    return [" ".join([base_name(texts[i]), *texts[i + 1 :]]) for i in starts]


def _assignments_of_env(values: Sequence[str | None]) -> Runs:
    """`env PS4='…' X=1 cmd`, `env -S 'rm x'`: what the wrappers' own words run."""
    runs = Runs()
    for index, value in enumerate(values):
        match = _ASSIGNMENT.match(value or "")
        if match is not None:
            runs = runs.plus(assignment_runs(match[1], match[2]))
        if value in ("-S", "--split-string") and index + 1 < len(values):
            runs = runs.plus(_split_string(values[index + 1]))
        elif value is not None and value.startswith(("--split-string=", "-S")) and len(value) > 2:
            runs = runs.plus(_split_string(value.split("=", 1)[-1].removeprefix("-S")))
    return runs


def _split_string(value: str | None) -> Runs:
    if value is None:
        return Runs(hidden="env -S splits a string built at run time into a command")
    try:
        words = shlex.split(value)
    except ValueError:
        return Runs(hidden="env -S is given a string hookgate cannot split")
    return commands_run(words, words, None) if words else Runs()


def _xargs_replace(values: Sequence[str | None]) -> str | None:
    """The string `xargs -I R` replaces with its input (`{}` for `-i`), if any."""
    for index, value in enumerate(values):
        if value == "-I" and index + 1 < len(values):
            return values[index + 1] or PLACEHOLDER
        if value is not None and value.startswith("--replace"):
            return value.partition("=")[2] or PLACEHOLDER
        if value is not None and value.startswith(("-I", "-i")):
            return value[2:] or PLACEHOLDER
    return None


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
    return _from_stdin(name, stdin)


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
    return _from_stdin(name, stdin)


def _from_stdin(name: str, stdin: Stdin | None) -> Runs:
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
        return _from_stdin(name, stdin)
    return Runs(hidden=f"{name} runs the commands of the file {file!r}, which no rule can read")


def _trap(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    words = [a for a in args if a != "--"]
    if not words or words[0] in ("-l", "-p", "-P") or len(words) == 1:
        return Runs()
    return Runs() if words[0] in ("-", "") else _code("trap", words[0])


def _alias(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    runs = Runs()
    for word in args:
        if word is None:
            return Runs(hidden="alias defines a command built at run time")
        if "=" in word:
            runs = runs.plus(Runs(scripts=(word.split("=", 1)[1],)))
    return runs


def _option_code(*options: str) -> Callable[[str, list[str | None], Stdin | None], Runs]:
    """A command whose option (`mapfile -C CODE`, `script -qc CODE`) is a command line."""

    def runs(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
        found = Runs()
        for index, word in enumerate(args):
            following = args[index + 1] if index + 1 < len(args) else None
            for option in options if word is not None else ():
                given, value = _option_value(word or "", option, following)
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
    return runs if runs.scripts or runs.hidden else _from_stdin(name, stdin)


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
        return _from_stdin(name, stdin)
    return _joined(name, rest[1:])


def _sg(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    rest = [word for word in args[1:] if word != "-c"]
    return _joined(name, rest) if rest else _from_stdin(name, stdin)


def _at(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    if "-f" in args or any(word is None for word in args):
        return Runs(hidden=f"{name} runs the commands of a file later")
    if "-l" in args or "-r" in args or "-d" in args:
        return Runs()
    return _from_stdin(name, stdin)


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
    if len(starts) > MAX_WRAPPED_FORMS:
        return Runs(hidden="it runs more commands than hookgate follows")
    runs = Runs()
    for start in starts:
        end = next((i for i in range(start, len(args)) if args[i] in (";", "+")), len(args))
        words = args[start:end]
        if not words:
            continue
        if PLACEHOLDER in (words[0] or ""):
            return Runs(hidden="find -exec puts a file's name in place of the command")
        texts = [word if word is not None else PLACEHOLDER for word in words]
        inner = commands_run(words, texts, None)
        if any(PLACEHOLDER in script for script in inner.scripts):
            return Runs(hidden="find -exec puts file names into a shell's command line")
        runs = runs.plus(inner)
    return runs


def _flock(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """`flock FILE -c CODE`, or `flock FILE COMMAND…` (a wrapper then)."""
    runs = _option_code("-c", "--command")(name, args, stdin)
    if runs.scripts or runs.hidden:
        return runs
    rest = args[_after_options(args, "wEn") + 1 :]
    texts = [word if word is not None else "$…" for word in rest]
    return commands_run(rest, texts, stdin) if rest else Runs()


def _hidden(why: str) -> Callable[[str, list[str | None], Stdin | None], Runs]:
    def runs(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
        return Runs(hidden=f"{name} {why}")

    return runs


def _sudo_shell(name: str, args: list[str | None], stdin: Stdin | None) -> Runs:
    """`sudo -s` and `sudo -i` alone start a shell on the standard input."""
    if any(word in ("-s", "-i", "--shell", "--login") for word in args):
        return _from_stdin(name, stdin)
    return Runs()


#: The commands that run code of their own beyond their name, by name.
RUNNERS: dict[str, Callable[[str, list[str | None], Stdin | None], Runs]] = {
    **dict.fromkeys(SHELLS, _shell),
    "eval": _eval, "source": _source, ".": _source, "trap": _trap, "alias": _alias,
    "mapfile": _option_code("-C"), "readarray": _option_code("-C"),
    "compgen": _option_code("-C"), "complete": _option_code("-C"), "script": _script,
    "flock": _flock, "watch": _watch, "ssh": _ssh, "sg": _sg,
    "at": _at, "batch": _at, "parallel": _parallel, "find": _find,
    "bind": _hidden("binds keys to commands"), "enable": _hidden("may load a builtin from a file"),
    "fc": _hidden("runs commands from the history"), "sudo": _sudo_shell, "doas": _sudo_shell,
}  # fmt: skip
