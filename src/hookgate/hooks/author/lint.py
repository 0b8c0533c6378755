"""Checks `hookgate hooks check`, and every session as it starts, run beyond
validation: will each hook's program run?

A hook whose program is missing fails on every event; a script that its own shell
cannot parse is worse: dash exits 2 on a syntax error, and exit 2 is a deliberate
block, so such a guard silently blocks everything. These are warnings, not errors:
the config is valid, the program may be installed later.

Linting runs nothing the config names: syntax is checked by the system's own shell
of the same name at a fixed absolute path (`/bin/bash -n`), never by a `shell:`
value or a `#!` line, in an environment of its own (no `BASH_ENV` from the hook).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hookgate.hooks.config import HooksConfig, HookSpec
from hookgate.hooks.files.yamlfile import script_interpreter
from hookgate.hooks.process import ProcessResult, SpawnError, resolve_program, run_process_sync
from hookgate.hooks.records import NamedTuple
from hookgate.hooks.runs.pins import command_words

if TYPE_CHECKING:  # the kinds' modules: imported by a file that has such hooks
    from hookgate.hooks.kinds.http.target import HttpTarget

#: Shells whose `-n` flag parses a script without running it, at the only paths the
#: linter runs them from: the system's own, whatever path the config gives.
_SHELLS = {name: f"/bin/{name}" for name in ("sh", "dash", "bash", "zsh", "ksh", "mksh", "ash")}
#: The whole environment of a syntax check: nothing from the config or the hook.
_CHECK_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
#: Seconds a syntax check may take.
_CHECK_TIMEOUT = 5.0
#: A word no shell reads as anything but a word: no quote, operator, expansion,
#: redirection, glob, brace or comment.
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./:=+,@%-]+")
#: Words that are syntax at a command's start in some shell (sh, bash, zsh, ksh).
_RESERVED = frozenset({
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "in", "function", "time", "coproc", "repeat", "foreach", "end",
    "nocorrect", "noglob",
})  # fmt: skip
#: Hosts an http hook reaches without leaving the machine.
_LOOPBACK = ("localhost", "127.0.0.1", "::1")
#: Words a shell runs itself: nothing to find in PATH.
_BUILTINS = frozenset(
    [
        "exit",
        "echo",
        "printf",
        "test",
        "[",
        "true",
        "false",
        ":",
        "cd",
        "read",
        "export",
        "set",
        "unset",
        "eval",
        "exec",
        ".",
        "source",
        "if",
        "case",
        "for",
        "while",
        "until",
        "{",
        "(",
        "!",
        "command",
        "type",
        "trap",
        "wait",
        "shift",
        "local",
        "return",
    ]
)


def lint_hooks(hooks: Sequence[HookSpec], project_dir: Path) -> list[list[str]]:
    """`lint_hook` for each of `hooks`; the warnings in the hooks' order.

    Synchronous, one hook at a time (a syntax check takes about a millisecond):
    `hooks check` needs no event loop, and sessions that start side by side (hand-offs,
    ACP) do not multiply the open files with a process per hook at once.
    """
    return [lint_hook(hook, project_dir) for hook in hooks]


async def lint_config(config: HooksConfig, project_dir: Path) -> list[str]:
    """Every warning about `config`, each naming its hook and event: a session's notices.

    The syntax checks run on the event loop, one at a time, like hooks: other sessions
    are served meanwhile, and no worker thread is started for them.
    """
    warnings = []
    for hook in config:
        for finding in _findings(hook, project_dir):
            warning = await finding.run() if isinstance(finding, _SyntaxCheck) else finding
            if warning is not None:
                warnings.append(f"hook {hook.name!r} ({hook.event.name}): {warning}")
    return warnings


def lint_hook(hook: HookSpec, project_dir: Path) -> list[str]:
    """Warnings about `hook`: missing or non-executable program, shell syntax errors,
    an event sent unencrypted off this machine, what trust cannot pin."""
    warnings = []
    for finding in _findings(hook, project_dir):
        warning = finding.run_sync() if isinstance(finding, _SyntaxCheck) else finding
        if warning is not None:
            warnings.append(warning)
    return [*warnings, *_unpinned(hook, project_dir)]


class _SyntaxCheck(NamedTuple):
    """A script or command for the system shell `argv[0]` to parse (`-n`), still to run;
    `warning` words what the shell said."""

    argv: list[str]
    cwd: Path
    warning: Callable[[str], str]

    def run_sync(self) -> str | None:
        try:
            result = run_process_sync(self.argv, **self._bounds())
        except SpawnError as exc:
            return self.warning(str(exc))
        return self._verdict(result)

    async def run(self) -> str | None:
        from hookgate.hooks.process import run_process  # the event loop's driver

        try:
            result = await run_process(self.argv, **self._bounds())
        except SpawnError as exc:
            return self.warning(str(exc))
        return self._verdict(result)

    def _bounds(self) -> dict[str, Any]:
        return {"env": _CHECK_ENV, "cwd": str(self.cwd), "timeout": _CHECK_TIMEOUT,
                "output_cap": 4096}  # fmt: skip

    def _verdict(self, result: ProcessResult) -> str | None:
        if result.returncode == 0:
            return None
        said = result.stderr.decode("utf-8", "replace").strip() or f"exit {result.returncode}"
        return self.warning(said.splitlines()[0])


def _findings(hook: HookSpec, project_dir: Path) -> list[str | _SyntaxCheck]:
    """What linting `hook` finds without running anything, in order, with the syntax
    checks still to run in their places."""
    return [*_listing_warnings(hook), *_kind_findings(hook, project_dir)]


def _listing_warnings(hook: HookSpec) -> list[str]:
    """A hook listed under another format's phase name (`PreToolUse`) with no `format:`
    reads hookgate's native events and replies: a Mecatl hook then matches no tool by
    `Shell`, and its `mutated` reply fails (on `UserPromptSubmit`, every question)."""
    if not hook.listed_as or hook.model is not None or hook.python is not None:
        return []
    mecatl = "format: mecatl for a Mecatl hook, " if hook.event.mecatl_phase else ""
    return [
        f"listed under {hook.listed_as!r}, a phase name of another hook system, with no "
        "'format:', so it reads hookgate's native events and replies, not that system's: "
        f"add {mecatl}format: claude for a Claude Code hook, or list it under "
        f"{hook.event.name} to mean the native format"
    ]


def _kind_findings(hook: HookSpec, project_dir: Path) -> list[str | _SyntaxCheck]:
    if hook.http is not None:
        return list(_http_warnings(hook.http))
    if hook.python is not None:
        return list(_find_module(hook.python, project_dir))
    if hook.function is not None or hook.model is not None:
        return []
    cwd = Path(hook.cwd) if hook.cwd else project_dir
    env = {**os.environ, **hook.env}
    findings: list[str | _SyntaxCheck] = []
    if (
        hook.command is not None
        and not _plain_words(hook.command)
        and (shell := _system_shell(hook.shell)) is not None
    ):
        findings.append(
            _SyntaxCheck(
                [shell, "-n", "-c", hook.command], cwd,
                lambda problem: f"{hook.shell} cannot parse the command: {problem}",
            )
        )  # fmt: skip
    program = _program_of(hook, cwd, project_dir)
    if program is not None and program not in _BUILTINS:
        findings.extend(_check_program(program, env, cwd))
    findings.extend(_missing_script(hook, cwd))
    return findings


#: Interpreters whose first argument is the script they run (`python3 hooks/guard.py`).
_INTERPRETERS = re.compile(r"(?:.*/)?(?:python[0-9.]*|bash|sh|dash|zsh|node|ruby|perl|deno|bun)")


def _missing_script(hook: HookSpec, cwd: Path) -> list[str]:
    """An interpreter's script that is not there: the hook fails on every event, and a
    guard under the default `onError: warn` then lets every event through unchecked."""
    words = command_words(hook)
    if len(words) < 2 or not _INTERPRETERS.fullmatch(words[0]) or words[1].startswith("-"):
        return []
    script = words[1]
    if "$" in script or (os.sep not in script and "." not in script):
        return []  # a variable's value, or a word that is no file name (`sh -c`)
    if (cwd / script).exists():
        return []
    unchecked = (
        f"; under onError: {hook.on_error.value} every {hook.event.name} goes on unchecked"
        if hook.event.can_block and hook.on_error.value != "fail" else ""
    )  # fmt: skip
    return [f"{script}: no such file (looked in {cwd}), which {words[0]} would run{unchecked}"]


def _plain_words(command: str) -> bool:
    """Whether `command` is plain words alone (`true`, `./guard.sh --strict`), which
    every shell parses: checking it would start a process at every session's start for
    nothing."""
    return all(
        _PLAIN_WORD.fullmatch(word) is not None and word not in _RESERVED
        for word in command.split(" ")
    )


def _http_warnings(target: HttpTarget) -> list[str]:
    from urllib.parse import urlsplit  # an http hook's module has it already

    url = target.url
    parts = urlsplit(url)
    warnings = [
        f"{name} is not set here: the hook fails while it is not (a header sends it)"
        for name in target.sent_variables()
        if name not in os.environ
    ]
    if parts.scheme == "http" and parts.hostname not in _LOOPBACK:
        warnings.append(
            f"{url}: plain http sends every event (prompts, commands) unencrypted; use https"
        )
    return warnings


def _find_module(reference: str, base_dir: Path) -> list[str]:
    """Whether a `python:` hook's module can be found, without importing anything."""
    from hookgate.hooks.kinds.python import local_module_files, split_reference

    module_name, _ = split_reference(reference)
    top = module_name.split(".")[0]
    if any(local_module_files(top, base_dir).values()):
        return []
    import importlib.util  # a `python:` hook's check alone asks

    try:  # imported already (an embedder's own `__main__` has no spec), or findable
        found = top in sys.modules or importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        found = False
    return [] if found else [f"{reference}: no module {top!r} next to the file or on sys.path"]


def _program_of(hook: HookSpec, cwd: Path, base_dir: Path) -> str | None:
    """The program word, `$CLAUDE_PROJECT_DIR` and `$PWD` read as the runner sets them."""
    words = command_words(hook)
    if not words or hook.args is not None or "$" not in words[0]:
        return words[0] if words else None
    from hookgate.hooks.runs.cmdwords import expand_known  # a session's start rarely needs it

    return expand_known(words[0], cwd, base_dir)


def _check_program(program: str, env: dict[str, str], cwd: Path) -> Iterator[str | _SyntaxCheck]:
    if os.sep in program:
        path = (cwd / program) if not os.path.isabs(program) else Path(program)
        if not path.exists():
            yield f"{program}: no such file (looked in {cwd})"
            return
        if not os.access(path, os.X_OK):
            yield f"{program}: not executable (chmod +x {program}); the shell would exit 126"
            return
    else:
        try:
            path = Path(resolve_program(program, env))
        except SpawnError:
            yield f"{program}: not found in PATH; the shell would exit 127"
            return
    interpreter = script_interpreter(path)
    shell = _system_shell(interpreter) if interpreter else None
    if shell is not None:
        yield _SyntaxCheck(
            [shell, "-n", str(path)], cwd,
            lambda problem: f"{program}: its shell {interpreter} rejects it: {problem} — at "
                            f"run time that is exit 2, which reads as a deliberate block",
        )  # fmt: skip


def _system_shell(named: str) -> str | None:
    """The system's own shell of the name `named` ends in, where installed; else None."""
    path = _SHELLS.get(Path(named).name)
    return path if path is not None and os.access(path, os.X_OK) else None


def _unpinned(hook: HookSpec, base_dir: Path) -> list[str]:
    """What the hook runs that trust cannot pin (a word built at run time), one warning
    each: `hooks check --strict` fails on a hook whose files a change could swap unseen.
    Not a session's notice: resolving reads the line with the bash parser."""
    from hookgate.hooks.runs.whatruns import what_hook_runs

    return [
        f"not pinned: {word} (read at run time: trust cannot tell which file it runs)"
        for word in what_hook_runs(hook, base_dir).unread
    ]
