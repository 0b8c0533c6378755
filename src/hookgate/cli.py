"""The `hookgate` command: line mode by default, `-p` for one question, and subcommands.

Expected errors (a config mistake, a stopped session) print one line and a hint on
stderr and exit 1; Ctrl-C exits 130. stdout carries only the product's output; a
reader that stops early (`| head`) ends it quietly, with the exit code of SIGPIPE.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace

from hookgate.frontends.output import (
    EXIT_BROKEN_PIPE,
    EXIT_OUTPUT_FAILED,
    OutputFailed,
    guard_stdout,
    output_failure,
    quiet_stdout,
)
from hookgate.hooks import HookgateError, HooksConfig
from hookgate.hooks.author import cli as hooks_cli
from hookgate.hooks.files import parsecache
from hookgate.hooks.process import adopt_orphans_at_first_start
from hookgate.hooks.runs import bytecode
from hookgate.store.home import cache_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

DEFAULT_AGENT_FILE = Path("hookgate.yaml")
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line, or, given the `argv` it will parse, the parts it can
    use: a command whose name is none of `argv`'s words is listed in help, not built."""
    import argparse

    from hookgate.commandline import Version, command_line

    parser = command_line(
        argv,
        prog="hookgate",
        description="An AI agent with hooks: your rules around it, outside its code.",
    )
    parser.add_argument("--version", action=Version, help="show the version and exit")
    parser.add_argument("--agent", "--config", dest="agent", type=Path, metavar="FILE",
                        default=DEFAULT_AGENT_FILE,
                        help="the agent file (default: ./hookgate.yaml)")  # fmt: skip
    parser.add_argument("-p", "--print", dest="question", metavar="QUESTION",
                        help="answer one question and exit; the answer alone on stdout")  # fmt: skip
    parser.add_argument("-v", "--verbose", action="store_true", help="show tool calls on stderr")
    _add_handoff_arguments(parser)
    resume = parser.add_mutually_exclusive_group()
    resume.add_argument("-c", "--continue", dest="continue_last", action="store_true",
                        help="continue the latest session of this directory")  # fmt: skip
    resume.add_argument("-r", "--resume", metavar="ID", help="resume the session ID")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    hooks_cli.add_parser(
        commands, load_config=_load_hooks_of, offered_tools=_offered_tools,
        agent_report=_agent_report, more_commands=_add_policy_tests, test_schema=_test_file_schema,
    )  # fmt: skip
    _build(
        commands, "trust",
        help="review an agent file and trust it: until then hookgate runs nothing it names",
        description="Show what an agent file makes hookgate run, start and send, then record "
        "its digests (and those of every file it names) as trusted.",
    )  # fmt: skip
    _build(commands, "hook", help="answer one hook event of another agent (stdin)")
    _build(commands, "install", help="make another agent run hookgate's hooks")
    _build(commands, "serve", help="answer hook events over HTTP: a policy service")
    init = commands.add_parser("init", help="write a commented starter agent file")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.set_defaults(handler=_run_init)
    demo = commands.add_parser("demo", help="an offline session with example hooks at work")
    demo.add_argument("--keep", type=Path, help="run in this directory and keep it")
    demo.set_defaults(handler=_run_demo)
    sessions = commands.add_parser("sessions", help="list saved sessions")
    sessions.set_defaults(handler=_run_sessions)
    acp = commands.add_parser("acp", help="serve the Agent Client Protocol on stdio, for editors")
    acp.add_argument("--agent", "--config", dest="agent", type=Path, metavar="FILE",
                     default=argparse.SUPPRESS,
                     help="the agent file (default: ./hookgate.yaml)")  # fmt: skip
    acp.set_defaults(handler=_run_acp)
    window = commands.add_parser("window", help="the agent in a browser page, on this machine only")
    window.add_argument("--agent", "--config", dest="agent", type=Path, metavar="FILE",
                        default=argparse.SUPPRESS,
                        help="the agent file (default: ./hookgate.yaml)")  # fmt: skip
    window.add_argument("--port", type=int, default=0,
                        help="the port on 127.0.0.1 (default: any free one)")  # fmt: skip
    window.add_argument("--no-browser", dest="open_browser", action="store_false",
                        help="print the URL, do not open a browser")  # fmt: skip
    window.add_argument("--max-sessions", type=_at_least_one, default=None, metavar="N",
                        help="sessions kept open at most; one more closes the one idle "
                             "the longest (default: 32)")  # fmt: skip
    window.set_defaults(handler=_run_window)
    return parser


def _add_policy_tests(commands: Any) -> None:
    """`hooks test` and `hooks replay`, on the `hooks` subparsers `commands`."""
    _build(
        commands, "test", help="run test files of cases through the agent file's hooks and rules"
    )
    _build(
        commands, "replay", help="what the agent file's hooks and rules decide on recorded sessions"
    )


#: The commands whose arguments their handler's module adds: that module, and its
#: function that takes the command's parser.
_ARGUMENTS = {
    "trust": ("hookgate.security.trust.command", "add_arguments"),
    "hook": ("hookgate.agents.cli", "add_hook_arguments"),
    "install": ("hookgate.agents.cli", "add_install_arguments"),
    "serve": ("hookgate.serve.cli", "add_arguments"),
    "test": ("hookgate.policytest.cli", "add_test_arguments"),
    "replay": ("hookgate.policytest.cli", "add_replay_arguments"),
}


def _build(commands: Any, name: str, **listed: str) -> None:
    """Add the command `name` (its help and description `listed` here) to `commands`,
    and its arguments from its handler's module (`_ARGUMENTS`), unless the line does not
    name it (`Unbuilt`): that module is then not imported at all. Importing the modules
    of the six commands built so was ~4 M instructions of a `hooks fire`."""
    from hookgate.commandline import Unbuilt

    command = commands.add_parser(name, **listed)
    if not isinstance(command, Unbuilt):
        module, function = _ARGUMENTS[name]
        getattr(__import__(module, fromlist=[function]), function)(command)


def _test_file_schema() -> Any:
    from hookgate.policytest.cli import test_file_schema

    return test_file_schema()


def _offered_tools(path: Path) -> tuple[str, ...] | None:
    from hookgate.config.agentfile import offered_tool_names  # the runtime, only when checked

    return offered_tool_names(path)


def _agent_report(path: Path) -> tuple[list[str], list[str]]:
    """What `hooks check` shows of an agent file beyond its hooks: its sandbox on this
    machine, and its permission rules (warnings, and notes on looser asked agents)."""
    from hookgate.security.rulecheck import file_findings  # the runtime, only when checked
    from hookgate.tools.sandbox.report import sandbox_report

    lines, warnings = sandbox_report(path)
    rule_warnings, notes = file_findings(path)
    if notes:
        lines = [*lines, *([""] if lines else []), "permissions", *(f"  note: {n}" for n in notes)]
    return lines, [*warnings, *(f"permissions: {w}" for w in rule_warnings)]


def entry() -> int:
    """The `hookgate` program: `main`, with the garbage collector kept out of its start-up
    and its exit.

    Start-up builds tens of thousands of objects that live as long as the process
    (modules, classes, functions), and the collector, run every few hundred allocations,
    walks them again and again while they are built: ~3 ms of a `-p` run. The exit ends
    with full collections over every object still alive: ~10 ms after a turn, for memory
    the kernel frees whole. So the collector stays off until the command's front end is
    imported; what exists then is frozen (no later collection walks it) and collecting
    starts; before the exit, everything is frozen again. Only this entry point does it:
    a program that calls `main` goes on living.
    """
    gc.disable()
    status = _run(None, started=_collect_from_now_on)
    gc.freeze()
    return status


def _collect_from_now_on() -> None:
    gc.freeze()
    gc.enable()


def main(argv: Sequence[str] | None = None) -> int:
    return _run(argv, started=lambda: None)


def _run(argv: Sequence[str] | None, started: Callable[[], None]) -> int:
    guard_stdout()
    try:
        return _main(argv, started)
    except BrokenPipeError:
        quiet_stdout()  # the reader has gone: say nothing
        return EXIT_BROKEN_PIPE
    except OutputFailed as exc:
        quiet_stdout()
        print(output_failure(exc), file=sys.stderr, flush=True)
        return EXIT_OUTPUT_FAILED


def _main(argv: Sequence[str] | None, started: Callable[[], None]) -> int:
    """Parse `argv`, import the command's front end, call `started`, run the command."""
    if argv is None:
        argv = sys.argv[1:]
    args = _usual_line(argv) or build_parser(argv).parse_args(argv)
    adopt_orphans_at_first_start()
    cache = cache_dir()
    parsecache.enable(cache)
    bytecode.keep_in(cache)
    try:
        if getattr(args, "handler", None) is not None:
            started()
            return int(args.handler(args))
        if args.ask is not None or args.answer_asked:
            started()
            return _run_handoff(args)
        if args.question is not None:
            from hookgate.frontends.printmode import print_mode
            from hookgate.hooks import loop

            started()
            # A turn that waits on nothing never imports asyncio (`hookgate.hooks.loop`).
            return loop.run(
                print_mode(args.agent, args.question, resume=args.resume,
                           continue_last=args.continue_last, verbose=args.verbose)
            )  # fmt: skip
        import asyncio

        from hookgate.frontends.line import line_mode

        started()
        return asyncio.run(
            line_mode(args.agent, resume=args.resume, continue_last=args.continue_last)
        )
    except HookgateError as exc:
        from hookgate.view import visible

        # It may quote a hook's output or a file's bytes: shown, never obeyed.
        print(f"hookgate: {visible(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        # One that lands outside a front end's own handling: during start-up, or while
        # the event loop is torn down after the answer.
        print("hookgate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _usual_line(argv: Sequence[str]) -> Any:
    """The arguments of a `hookgate hooks fire` or `hookgate hook AGENT` line, as
    `build_parser` would parse them, read without argparse where the line is a usual
    one (`hooks_cli.fire_arguments`, `agents.cli.hook_arguments`); else None. Another
    agent runs one of them on each of its events."""
    if list(argv[:2]) == ["hooks", "fire"]:
        fields = hooks_cli.fire_arguments(argv[2:])
        if fields is not None:
            return SimpleNamespace(**fields, handler=hooks_cli.run_fire, load_config=_load_hooks_of)
    elif list(argv[:1]) == ["hook"]:
        from hookgate.agents.cli import hook_arguments

        fields = hook_arguments(argv[1:])
        if fields is not None:
            return SimpleNamespace(**fields)
    return None


def _load_hooks_of(path: Path, import_python: bool) -> HooksConfig:
    from hookgate.config.agentfile import load_hooks_of  # the agent file's parts cost ~40 ms

    return load_hooks_of(path, import_python)


def _add_handoff_arguments(parser: argparse.ArgumentParser) -> None:
    import argparse  # for SUPPRESS: `build_parser` has imported it

    parser.add_argument("--ask", nargs=2, metavar=("NAME", "QUESTION"),
                        help="hand QUESTION to the agent NAME listed under 'agents:'; "
                             "its answer alone on stdout")  # fmt: skip
    # The asked agent's side of a hand-off: internal, started by `hookgate.handoff.child`.
    parser.add_argument("--answer-asked", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--asked-depth", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--ask-depth-limit", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--asked-as", default=None, help=argparse.SUPPRESS)
    # The asker's pin of the asked agent's trust entry: it only narrows what runs.
    parser.add_argument("--trusted-digest", default=None, help=argparse.SUPPRESS)
    # The asker's deny rules: they bind the asked agent as well as its own; only narrows.
    parser.add_argument("--caller-deny", action="append", default=[], help=argparse.SUPPRESS)


def _run_handoff(args: argparse.Namespace) -> int:
    if args.answer_asked:
        from hookgate.frontends.asked import answer_asked_main

        return answer_asked_main(
            args.agent, depth=args.asked_depth, depth_limit=args.ask_depth_limit,
            trusted_digest=args.trusted_digest, asked_as=args.asked_as, resume=args.resume,
            caller_deny=tuple(args.caller_deny),
        )  # fmt: skip
    import asyncio

    from hookgate.frontends.askmode import ask_mode

    name, question = args.ask
    return asyncio.run(ask_mode(args.agent, name, question, verbose=args.verbose))


def _run_init(args: argparse.Namespace) -> int:
    from hookgate.frontends.starter import write_starter

    path, *hooks = write_starter(args.agent, force=args.force)
    config = "" if args.agent == DEFAULT_AGENT_FILE else f" --agent {path}"
    hookgate = _invoked_as()
    names = [str(written) for written in (path, *hooks)]
    print(f"wrote {', '.join(names[:-1])} and {names[-1]}, and trusted them. Try:")
    print(f"  {hookgate} hooks check{config}  # what runs, and when")
    print(f"""  echo '{{"command": "rm -rf build"}}' | {hookgate} hooks fire preToolCall"""
          f"""{config} --tool shell  # the guard blocks it""")  # fmt: skip
    print(f"  {hookgate}{config}  # a session: first point model: at your server")
    print(f"After an edit, check it again and trust it anew: {hookgate} trust {path}")
    return 0


def _invoked_as() -> str:
    """How to run this hookgate again from here: `hookgate` when that is what PATH finds,
    else the path it was started by (a fresh clone's `.venv/bin` is not on PATH)."""
    started = Path(sys.argv[0])
    import shlex  # `init` alone asks
    import shutil

    found = shutil.which("hookgate")
    if found is not None and Path(found).resolve() == started.resolve():
        return "hookgate"
    if not started.is_absolute():
        return shlex.quote(str(started))
    inside = os.path.relpath(started)
    return shlex.quote(str(started) if inside.startswith("..") else inside)


def _run_demo(args: argparse.Namespace) -> int:
    from hookgate.frontends.demo import run_demo

    return run_demo(keep=args.keep)


def _run_acp(args: argparse.Namespace) -> int:
    import asyncio

    from hookgate.frontends.acp.agent import acp_mode

    return asyncio.run(acp_mode(args.agent))


def _at_least_one(text: str) -> int:
    import argparse  # the parser that calls this has imported it

    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def _run_window(args: argparse.Namespace) -> int:
    from hookgate.frontends.window import DEFAULT_MAX_SESSIONS
    from hookgate.frontends.window.serve import window_mode

    return window_mode(
        args.agent, port=args.port, open_browser=args.open_browser,
        max_sessions=args.max_sessions or DEFAULT_MAX_SESSIONS,
    )  # fmt: skip


def _run_sessions(args: argparse.Namespace) -> int:
    from hookgate.frontends.sessionlist import print_sessions
    from hookgate.store.session import SessionStore

    return print_sessions(SessionStore())


if __name__ == "__main__":
    sys.exit(entry())
