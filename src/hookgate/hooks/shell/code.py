"""What one command runs besides itself: `sudo rm x`, `bash -c '…'`, `find -exec`,
`trap '…' EXIT`, a shell fed a here-string, `source /dev/stdin`, `watch`, `script -c`.

`commands_run` reads a command's words (each its literal value, or None where the
shell builds it at run time) and what its standard input holds, and returns the forms
it could run as, the literal command lines it makes a shell run (the caller parses and
judges them like the line itself), and, where it cannot know what will run, why. The
tables are data (here the wrappers and variables, in `runners` the commands that
run code of their own): a command missing from them runs as itself (docs/security.md).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from hookgate.hooks.records import NamedTuple
from hookgate.hooks.shell.runners import (
    PLACEHOLDER,
    RUNNERS,
    SHELLS,
    Runs,
    Stdin,
    base_name,
    from_stdin,
)

__all__ = ["MAX_WRAPPED_FORMS", "PLACEHOLDER", "Runs", "Stdin", "base_name", "commands_run"]

#: Commands that run the command after them, each with its options that take a value
#: and how many plain arguments come before that command (`timeout 5 rm`).
WRAPPERS: dict[str, tuple[str, int]] = {
    "command": ("", 0), "builtin": ("", 0), "exec": ("a", 0), "nohup": ("", 0),
    "time": ("fo", 0), "nice": ("n", 0), "env": ("uCS", 0), "sudo": ("ugpCDhrtTUcR", 0),
    "doas": ("uC", 0), "timeout": ("sk", 1), "stdbuf": ("ioe", 0), "ionice": ("cnp", 0),
    "setsid": ("", 0), "xargs": ("aEILnPsd", 0), "chrt": ("", 1), "taskset": ("", 1),
    "coproc": ("", 0), "unbuffer": ("", 0), "chroot": ("", 1),
    "busybox": ("", 0), "toybox": ("", 0), "pkexec": ("", 0), "strace": ("eoOpPsSuXU", 0),
    "ltrace": ("eoOpnsSuXU", 0), "unshare": ("SGRw", 0), "nsenter": ("tSG", 0),
    "setpriv": ("", 0), "fakeroot": ("lsib", 0), "faketime": ("", 1), "firejail": ("", 0),
    "proxychains": ("fq", 0), "proxychains4": ("fq", 0), "torsocks": ("uapP", 0),
    "catchsegv": ("", 0), "valgrind": ("", 0), "systemd-run": ("pEuG", 0),
    "dbus-run-session": ("", 0), "xvfb-run": ("nsfe", 0), "chronic": ("", 0),
    "sem": ("j", 0), "until": ("", 0), "caffeinate": ("tw", 0), "gtimeout": ("sk", 1),
    # Runners that take a subcommand first (`uv run rm x`, `docker exec c rm x`): the
    # forms from each plain word on hold the command they run.
    "uv": ("", 0), "poetry": ("", 0), "pipenv": ("", 0), "bundle": ("", 0), "npx": ("", 0),
    "pnpx": ("", 0), "bunx": ("", 0), "direnv": ("", 0), "docker": ("", 0),
    "podman": ("", 0), "kubectl": ("", 0), "sshpass": ("pfdP", 0), "entr": ("", 0),
}  # fmt: skip
#: Of those, the runners whose command comes after a subcommand and its own words
#: (`docker exec box sh -c '…'`): any plain word after them may start it.
SUBCOMMAND_RUNNERS = frozenset({
    "uv", "poetry", "pipenv", "bundle", "direnv", "docker", "podman", "kubectl",
})  # fmt: skip
#: Wrappers that, given no command, start a shell on the standard input (`unshare -r
#: <<< 'rm x'`).
SHELL_WHEN_ALONE = frozenset({"unshare", "nsenter", "fakeroot", "firejail", "chroot", "pkexec"})
#: Wrappers whose table names every short option that takes a value: any other short
#: option of theirs is read as a flag alone (`unshare -r ls` runs `ls`, `sudo -E grep`
#: runs `grep`).
COMPLETE_OPTIONS = SHELL_WHEN_ALONE | {"sudo", "doas"}
#: The builtins that declare variables, whose `-n` makes a reference to another.
DECLARING = frozenset({"declare", "typeset", "local"})
#: Readings of one command's wrapper options followed; past it the command is unknown.
MAX_OPTION_READINGS = 256
#: Start points of the wrapper forms of one command; past it the command is unknown
#: (a thousand nested `nohup`s cost quadratic time to list).
MAX_WRAPPED_FORMS = 64
#: Programs that take their arguments as data and run none of them: a deny rule reads
#: them by their own name alone. Any other program may run what its words spell
#: (`eatmydata rm x`, `prlimit --nproc=9 rm x`, `cargo run -- rm x`, `sort
#: --compress-program=rm`): `argument_forms`. Not here, for that: `sort`, `rg` (`--pre`),
#: `ag` (`--pager`), `wget` (`--use-askpass`).
DATA_ONLY = frozenset({
    "echo", "printf", "cat", "tac", "nl", "ls", "dir", "grep", "egrep", "fgrep",
    "head", "tail", "wc", "uniq", "cut", "paste", "join", "fold", "fmt", "tr",
    "column", "test", "[", "true", "false", "pwd", "basename", "dirname", "realpath",
    "readlink", "stat", "file", "diff", "cmp", "comm", "touch", "mkdir", "cp", "mv", "ln",
    "chmod", "chown", "chgrp", "jq", "date", "sleep", "seq", "whoami", "id", "uname",
    "hostname", "which", "du", "df", "tee", "md5sum", "sha1sum", "sha256sum", "sha512sum",
    "b2sum", "cksum", "base64", "base32", "xxd", "od", "hexdump", "strings", "shuf", "yes",
    "expr", "numfmt", "rev", "truncate", "mktemp", "printenv", "tty", "nproc", "arch",
    "iconv", "curl",
})  # fmt: skip
#: Start points of the argument forms of one command; past it the command is unknown.
MAX_ARGUMENT_FORMS = 256
#: Variables whose value the shell or a program runs as a command line later
#: (`PS4='$(rm x)'; set -x`, `GIT_SSH_COMMAND='rm x' git fetch`).
CODE_VARIABLES = frozenset({
    "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "GIT_SSH_COMMAND", "GIT_PAGER",
    "GIT_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_SEQUENCE_EDITOR", "PAGER",
    "MANPAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS",
    "SUDO_ASKPASS", "BROWSER",
})  # fmt: skip
#: Variables whose value names code to load from a file, or points a command name at
#: another program (`BASH_CMDS[ls]=/bin/rm`): nothing a rule can read.
FILE_CODE_VARIABLES = frozenset({
    "BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "PYTHONSTARTUP",
    "PERL5OPT", "NODE_OPTIONS", "RUBYOPT", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMANDS",
    "BASH_CMDS", "BASH_ALIASES", "TEXTDOMAINDIR", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR",
    "GCONV_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
})  # fmt: skip
#: Prefixes of such variables: exported functions, the loader's, git's configuration
#: (`GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm x'`).
FILE_CODE_PREFIXES = ("BASH_FUNC_", "LD_", "DYLD_", "GIT_CONFIG")
#: Endings of names whose value programs run as a command (`SYSTEMD_PAGER`,
#: `KUBE_EDITOR`, `RSYNC_RSH`, `FZF_DEFAULT_COMMAND`), as the `CODE_VARIABLES` are.
CODE_SUFFIXES = ("PAGER", "EDITOR", "_COMMAND", "_RSH", "ASKPASS")
#: Builtins that assign to the variables their words name, each with its options that
#: take a value: the value is set at run time, past what a rule can judge.
ASSIGNING: dict[str, str] = {
    "printf": "v", "read": "adeinNpt", "mapfile": "dnOsuCc", "readarray": "dnOsuCc",
    "getopts": "", "wait": "p", "declare": "", "typeset": "", "local": "", "export": "",
    "readonly": "",
}  # fmt: skip


def commands_run(values: Sequence[str | None], texts: Sequence[str], stdin: Stdin | None) -> Runs:
    """What the command of these words runs, past its wrappers.

    `values`: each word's literal value, None where it is built at run time (an
    expansion, a glob, a brace); `texts`: each word as the forms show it. `stdin`: its
    standard input where a redirect, a here-string or a pipe gives it (None: the tool's).
    """
    wrapped = _wrapped_forms(values, texts)
    starts = _starts(values)
    if wrapped is None or starts is None:
        return Runs(hidden="it nests more wrapper commands than hookgate follows")
    if not values:
        return Runs()
    start = starts.principal
    if start is None:
        built = next((t for v, t in zip(values, texts, strict=True) if v is None), texts[0])
        return Runs(tuple(wrapped), hidden=f"its command name is built at run time ({built})")
    name = base_name(values[start] or "")
    principal = [name, *texts[start + 1 :]]
    runs = Runs((" ".join(principal), *wrapped))
    # Up to the command; all of them where the wrappers run alone (`env -S'rm x'`).
    runs = runs.plus(_assignments_of_env(values if name in WRAPPERS else values[:start]))
    for index in (start, *starts.others, *starts.wrappers):
        runs = runs.plus(_own_runs(values, index, stdin))
    for index in (start, *starts.others):  # a wrapper here runs with no command after it
        if base_name(values[index] or "") in SHELL_WHEN_ALONE:
            runs = runs.plus(from_stdin(base_name(values[index] or ""), stdin))
    if name not in DATA_ONLY and name not in WRAPPERS and name not in RUNNERS:
        perhaps = argument_forms(texts[start + 1 :])
        if perhaps is None:
            return Runs(runs.forms, hidden="it has more words than hookgate follows")
        scripts = _shell_code_in_arguments(values[start + 1 :], stdin)
        runs = Runs((*runs.forms, *perhaps), runs.scripts + scripts, runs.hidden, runs.commands)
    if "xargs" not in (base_name(value or "") for value in values[:start]):
        return runs
    replace = _xargs_replace(values[:start])
    if replace and (replace in principal[0] or any(replace in s for s in runs.scripts)):
        return Runs(runs.forms, hidden=f"xargs puts its input into the command at {replace!r}")
    # It adds words read from its input: `xargs rm` runs `rm` with arguments.
    return Runs((*runs.forms, " ".join([*principal, PLACEHOLDER])), runs.scripts, runs.hidden)


def _shell_code_in_arguments(args: Sequence[str | None], stdin: Stdin | None) -> tuple[str, ...]:
    """The `-c` code of each shell a program's words may start (`eatmydata bash -c
    '…'`, `prlimit --nproc=9 sh -c '…'`): judged as the forms are. Its other ways to
    run code (a file, its standard input) are not taken: `apt install bash` is common."""
    scripts: tuple[str, ...] = ()
    for index, word in enumerate(args):
        text = word or ""
        name = base_name(text.partition("=")[2] if text[:2] == "--" else text)
        if name in SHELLS:
            scripts += RUNNERS[name](name, list(args[index + 1 :]), stdin).scripts
    return scripts


def _own_runs(values: Sequence[str | None], index: int, stdin: Stdin | None) -> Runs:
    """What the command starting at `index` runs besides itself: the code it runs
    (`RUNNERS`) or the variables it sets that run code (`assigned_by_command`)."""
    name = base_name(values[index] or "")
    args = list(values[index + 1 :])
    assigns = assigned_by_command(name, args)
    if assigns is not None:
        return Runs(hidden=assigns)
    handler = RUNNERS.get(name)
    return Runs() if handler is None else _nested(handler(name, args, stdin))


def _nested(runs: Runs) -> Runs:
    """`runs` with the commands it runs as words judged in turn; one that puts its input
    in place of a command's name or into a shell's code is not known."""
    for words in runs.commands:
        texts = [word if word is not None else "$…" for word in words]
        inner = commands_run(words, texts, None)
        if PLACEHOLDER in (words[0] or "") or any(PLACEHOLDER in s for s in inner.scripts):
            return Runs(runs.forms, hidden="it puts its input into the code of a command it runs")
        runs = Runs(runs.forms, runs.scripts, runs.hidden).plus(inner)
    return runs


def assignment_runs(name: str, value: str | None) -> Runs:
    """What assigning `value` to the variable `name` (`a[i]` an element of `a`) makes
    run later, if anything."""
    name = name.partition("[")[0].rstrip("+")
    if name in CODE_VARIABLES or name.endswith(CODE_SUFFIXES):
        if value is None:
            return Runs(hidden=f"{name} holds a command line built at run time")
        if name.startswith("PS"):  # a prompt: expanded as a double-quoted string is
            return Runs(scripts=(': "' + value.replace('"', '\\"') + '"',))
        return Runs(scripts=(f"{value} {PLACEHOLDER}",))  # run with arguments after it
    if name in FILE_CODE_VARIABLES or name.startswith(FILE_CODE_PREFIXES):
        return Runs(hidden=f"{name} makes programs load code from elsewhere")
    return Runs()


def runs_code_when_set(name: str) -> bool:
    """Whether a value assigned to the variable `name` may make code run."""
    name = name.partition("[")[0].rstrip("+")
    return (
        name in CODE_VARIABLES or name in FILE_CODE_VARIABLES
        or name.startswith(FILE_CODE_PREFIXES) or name.endswith(CODE_SUFFIXES)
    )  # fmt: skip


#: A name in an arithmetic expression, which may assign to it (`((BASH_CMDS[ls]=0))`).
_ARITHMETIC_NAME = re.compile(r"[A-Za-z_]\w*")


def sets_code_variable_in_arithmetic(expression: str) -> str | None:
    """A variable that runs code which an arithmetic `expression` names, if any: the
    expression may assign to it."""
    return next(
        (name for name in _ARITHMETIC_NAME.findall(expression) if runs_code_when_set(name)), None
    )


def assigned_by_command(name: str, args: Sequence[str | None]) -> str | None:
    """Why the builtin `name` with `args` hides what runs, if it does: it assigns at run
    time to a variable that runs code (`printf -v PS4 …`, `read BASH_CMDS[ls]`), or
    makes a nameref (`declare -n r=PS4`) through which any later assignment may."""
    takes_value = ASSIGNING.get(name)
    if takes_value is None:
        return None
    index = 0
    while index < len(args):
        word, index = args[index], index + 1
        if word is None:
            return f"{name} assigns to a variable named at run time"
        if word.startswith("-") and len(word) > 1 and word != "--":
            if name in DECLARING and "n" in word:
                return f"{name} {word} makes a reference through which any variable is set"
            letter = next((c for c in word[1:] if c in takes_value), None)
            if letter is not None and word.endswith(letter):
                word, index = (args[index] if index < len(args) else ""), index + 1
            elif letter is not None:
                word = word[word.index(letter) + 1 :]
            else:
                continue
            if word is None:
                return f"{name} assigns to a variable named at run time"
            if letter not in "av":  # only `-v NAME` and `-a NAME` name a variable
                continue
        elif name == "printf":
            continue  # printf's other words are its format and arguments
        if runs_code_when_set(word.partition("=")[0]):
            return f"{name} sets {word.partition('=')[0]}, which runs code"
    return None


class _Starts(NamedTuple):
    """Where the command past a line's wrappers may start (`_starts`)."""

    principal: int | None
    """The likeliest start, reading each option the wrappers' tables do not know as
    taking no value; None where the word at any start is built at run time."""
    others: tuple[int, ...]
    """Every other start some reading of the options gives (`timeout --signal KILL 5
    bash`: `5`, or `bash` where `--signal` takes `KILL`)."""
    wrappers: tuple[int, ...]
    """The wrappers on the way, which may run code of their own (`sudo -s 'rm x'`)."""


def _starts(values: Sequence[str | None]) -> _Starts | None:
    """Every word where the command past the wrappers may start: wherever the option
    grammar is uncertain (a long option, one the tables do not know) both readings are
    followed, so no start a wrapper could really take is left unjudged. None past
    `MAX_OPTION_READINGS` readings."""
    found: list[int | None] = []
    wrappers: list[int] = []
    pending, seen = [0], set()
    while pending:
        index = pending.pop()
        if index in seen:
            continue
        seen.add(index)
        if len(seen) > MAX_OPTION_READINGS:
            return None
        value = values[index] if index < len(values) else ""
        name = base_name(value) if value is not None else None
        if name not in WRAPPERS:
            found.append(None if value is None else index)
            continue
        wrappers.append(index)
        takes_value, positional = WRAPPERS[name]
        ends = [end + positional for end in _option_ends(values, index + 1, name, takes_value)]
        if name in SUBCOMMAND_RUNNERS:
            ends += [i for i in range(index + 1, len(values)) if (values[i] or "")[:1] != "-"]
        found += [index for end in ends if end >= len(values)]  # `env` alone: it runs
        pending += reversed([end for end in ends if end < len(values)])
    known = [index for index in found if index is not None]
    if len(known) < len(found) or not known:
        return _Starts(None, (), tuple(wrappers))
    return _Starts(known[0], tuple(dict.fromkeys(known[1:])), tuple(wrappers))


def _option_ends(
    values: Sequence[str | None], index: int, name: str, takes_value: str
) -> list[int]:
    """The words where a wrapper's options may end, from `index`, the likeliest first."""
    ends: list[int] = []
    pending, seen = [index], set()
    while pending:
        index = pending.pop()
        word = values[index] if index < len(values) else None
        if index in seen:
            continue
        seen.add(index)
        if word is None or not word.startswith("-") or word == "-":
            if word == "-":  # an operand, or an option (`env -` is `env -i`)
                pending.append(index + 1)
            while name == "env" and index < len(values) and "=" in (values[index] or ""):
                index += 1  # env takes every NAME=VALUE word, whatever NAME holds
            ends.append(index)
        elif word == "--":
            ends.append(index + 1)
        else:
            letter = next((c for c in word[1:] if c in takes_value), None)
            short = not word.startswith("--")
            known = "=" in word or (short and (letter is not None or name in COMPLETE_OPTIONS))
            takes = letter is not None and word.endswith(letter) and short
            # Pushed last is read first: an unknown option read first as taking no value.
            pending += [index + 2] if takes else [index + 1] if known else [index + 2, index + 1]
    return ends


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


def argument_forms(texts: Sequence[str]) -> list[str] | None:
    """A program's arguments from each word that could name a command on (not an
    option, no space in it; an option's `=value` too): what it may run (`eatmydata rm
    x`: `rm x`; `sort --compress-program=rm x`: `rm x`). None past `MAX_ARGUMENT_FORMS`
    such words."""
    starts: list[tuple[int, str]] = []
    for index, text in enumerate(texts):
        if text.startswith("--") and "=" in text:
            text = text.partition("=")[2]
        elif text.startswith("-"):
            continue
        if text and not any(c.isspace() for c in text):
            starts.append((index, text))
    if len(starts) > MAX_ARGUMENT_FORMS:
        return None
    return [" ".join([base_name(name), *texts[index + 1 :]]) for index, name in starts]


def _assignments_of_env(values: Sequence[str | None]) -> Runs:
    """`env PS4='…' X=1 cmd`, `env -S 'rm x'`: what the wrappers' own words run."""
    runs = Runs()
    for index, value in enumerate(values):
        if value is not None and "=" in value and not value.startswith("-"):
            name, _, assigned = value.partition("=")
            runs = runs.plus(assignment_runs(name.rstrip("+"), assigned))
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
