"""The command line a `hookgate` process builds, which is only the part its words can use.

`build_parser(argv)` builds in full the commands `argv` names and only lists the others,
their parsers left unbuilt (start-up is paid on every command). Whatever the words, it must parse them as
the whole command line does: the same namespace, the same help, the same error. The usual
`hooks fire` and `hook AGENT` lines, which another agent runs on each of its events, are
read without argparse at all, into what argparse makes of them.
"""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from hookgate.agents.cli import HOOK_OPTIONS
from hookgate.cli import _usual_line, build_parser
from hookgate.hooks.author.cli import FIRE_OPTIONS

ARGVS = [
    [],
    ["-p", "hi"],
    ["-p", "hooks"],  # a question that is a command's name
    ["--agent", "serve", "-p", "x"],
    ["hooks", "fire", "preToolCall", "--tool", "shell"],
    ["hooks", "check", "a.yaml"],
    ["hooks", "schema", "preToolCall", "--format", "claude"],
    ["hooks", "test", "cases.yaml"],
    ["trust", "--yes"],
    ["hook", "claude"],
    ["install", "codex", "--yes"],
    ["serve"],
    ["window", "--port", "8080", "--no-browser"],
    ["acp", "--agent", "b.yaml"],
    ["init", "--force"],
    ["-c"],
]
#: Lines that are errors or help: each must read the same from either parser.
ASKED = [
    ["--help"],
    ["hooks", "--help"],
    ["hooks", "fire", "--help"],
    ["nosuch"],
    ["hooks", "nosuch"],
    ["hooks", "fire"],  # its event is missing
    ["serve", "--bogus"],
    ["window", "--max-sessions", "0"],
]


def parsed(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[object, str, str]:
    """(the namespace or the exit code, stdout, stderr) of parsing `argv`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = vars(parser.parse_args(argv))
        except SystemExit as exit:
            result = exit.code
    return result, out.getvalue(), err.getvalue()


def comparable(result: object) -> object:
    """A namespace with its callables by name: two parsers' handlers are the same
    functions, their `load_config` hooks too, but bound anew each build."""
    if not isinstance(result, dict):
        return result
    return {key: getattr(value, "__qualname__", value) for key, value in result.items()}


@pytest.mark.parametrize("argv", ARGVS + ASKED, ids=lambda argv: " ".join(argv) or "(none)")
def test_the_parser_built_for_the_words_parses_them_as_the_whole_one_does(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    whole = parsed(build_parser(), argv)
    built_for = parsed(build_parser(argv), argv)

    assert comparable(built_for[0]) == comparable(whole[0])
    assert built_for[1:] == whole[1:]


def test_help_lists_every_command_though_none_is_built() -> None:
    listed = parsed(build_parser(["--help"]), ["--help"])[1]
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]

    assert len(commands) >= 10
    for name in commands:
        assert f"\n    {name} " in listed


FIRE, HOOK = ["hooks", "fire"], ["hook"]
#: Lines read without argparse (`hookgate.cli._usual_line`): each option, the event or
#: agent before or after them, an option given twice, values that are no option.
USUAL_LINES = [
    [*FIRE, "preToolCall", "--tool", "shell"],
    [*FIRE, "--tool", "shell", "PreToolUse"],
    [*FIRE, "preGeneration"],
    [*FIRE, "postToolCall", "--agent", "a.yaml", "--tool", "x", "--call-id", "c1"],
    [*FIRE, "postAsk", "--config", "b.yaml", "--agent-name", "helper"],
    [*FIRE, "preToolCall", "--tool", "a", "--tool", "b"],
    [*FIRE, "preToolCall", "--tool", ""],
    [*FIRE, "", "--tool", "a b"],
    [*FIRE, "nosuchEvent", "--agent-name", "x=y"],
    [*HOOK, "claude"],
    [*HOOK, "codex", "--agent", "a.yaml"],
    [*HOOK, "--remote", "http://127.0.0.1:8700/", "gemini"],
    [*HOOK, "claude", "--agent", "a.yaml", "--remote", "http://h/", "--agent", "b.yaml"],
]
#: Lines that are argparse's own to read, answer or refuse.
ARGPARSE_LINES = [
    FIRE,
    [*FIRE, "--help"],
    [*FIRE, "preToolCall", "-h"],
    [*FIRE, "preToolCall", "--to", "shell"],  # an abbreviation
    [*FIRE, "preToolCall", "--tool=shell"],
    [*FIRE, "preToolCall", "--tool"],
    [*FIRE, "preToolCall", "--tool", "-x"],
    [*FIRE, "-x y", "--tool", "shell"],  # a positional to argparse (it has a space)
    [*FIRE, "-"],
    [*FIRE, "preToolCall", "extra"],
    [*FIRE, "preToolCall", "--", "x"],
    [*FIRE, "preToolCall", "--bogus", "x"],
    HOOK,
    [*HOOK, "cursor"],  # no agent hookgate knows: argparse's choices refuse it
    [*HOOK, "claude", "--help"],
    [*HOOK, "claude", "--agent=a.yaml"],
    [*HOOK, "claude", "--ag", "a.yaml"],
    [*HOOK, "claude", "--agent"],
    [*HOOK, "claude", "codex"],
    [*HOOK, "claude", "--remote", "-x"],
]


@pytest.mark.parametrize("argv", USUAL_LINES, ids=" ".join)
def test_a_usual_line_is_read_without_argparse_as_argparse_reads_it(argv: list[str]) -> None:
    fast = _usual_line(argv)
    full = parsed(build_parser(), argv)[0]

    assert fast is not None
    assert isinstance(full, dict)
    assert comparable(vars(fast)) == comparable({key: full[key] for key in vars(fast)})


@pytest.mark.parametrize("argv", ARGPARSE_LINES, ids=" ".join)
def test_any_other_line_is_left_to_argparse(argv: list[str]) -> None:
    assert _usual_line(argv) is None


@pytest.mark.parametrize(
    ("line", "options"),
    [([*FIRE, "preToolCall"], FIRE_OPTIONS), ([*HOOK, "claude"], HOOK_OPTIONS)],
    ids=["fire", "hook"],
)
def test_every_option_read_without_argparse_is_one_the_command_has(
    line: list[str], options: dict[str, str]
) -> None:
    for option, attribute in options.items():
        argv = [*line, option, "v"]
        full = parsed(build_parser(), argv)[0]
        assert isinstance(full, dict), option
        assert vars(_usual_line(argv))[attribute] == full[attribute]
