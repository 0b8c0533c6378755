"""`hookgate hook AGENT` and `hookgate install AGENT`: hookgate as another agent's hooks.

`hook` is what the agent runs on each event (its JSON on stdin, the agent's own reply
on stdout); `install` writes the agent's hook settings so that it does. Each command
imports its agent's module only when run: `hook` starts once per event.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from hookgate.agents import AGENT_MODULES, AGENT_NAMES
from hookgate.hooks.author.cli import plain_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from hookgate.agents.protocol import AgentProtocol, HookSettings


def add_hook_arguments(hook: argparse.ArgumentParser) -> None:
    """Add the arguments of `hookgate hook` to its parser (`hookgate.cli` names it)."""
    hook.add_argument("agent_name", choices=AGENT_NAMES, metavar="AGENT",
                      help="the agent that runs it: " + ", ".join(AGENT_NAMES))  # fmt: skip
    hook.add_argument("--agent", dest="hook_agent_file", type=Path, metavar="FILE",
                      help="the agent file (default: hookgate.yaml in the agent's project)")  # fmt: skip
    hook.add_argument("--remote", metavar="URL",
                      help="let the hookgate serve at URL decide (token: $HOOKGATE_SERVE_TOKEN)")  # fmt: skip
    hook.set_defaults(handler=run_hook)


#: `hook`'s options, as `add_hook_arguments` defines them, and the attribute each sets.
HOOK_OPTIONS = {"--agent": "hook_agent_file", "--remote": "remote"}


def hook_arguments(words: Sequence[str]) -> dict[str, Any] | None:
    """The arguments of `hook` from the words after it, read as argparse reads them
    (`add_hook_arguments`), or None where argparse is needed (`plain_line`), or where
    the agent is missing, one too many or none hookgate knows. The line an installed
    hook runs on every event of its agent is one of the usual ones."""
    line = plain_line(words, HOOK_OPTIONS)
    if line is None or len(line[1]) != 1 or line[1][0] not in AGENT_NAMES:
        return None
    given, (agent,) = line
    agent_file = given.get("hook_agent_file")
    return {
        "agent_name": agent, "hook_agent_file": None if agent_file is None else Path(agent_file),
        "remote": given.get("remote"), "handler": run_hook,
    }  # fmt: skip


def add_install_arguments(install: argparse.ArgumentParser) -> None:
    """Add the arguments of `hookgate install` to its parser (`hookgate.cli` names it)."""
    install.add_argument("agent_name", choices=AGENT_NAMES, metavar="AGENT",
                         help="the agent to set up: " + ", ".join(AGENT_NAMES))  # fmt: skip
    where = install.add_mutually_exclusive_group()
    where.add_argument("--project", dest="scope", action="store_const", const="project",
                       default="project", help="this project's settings (default)")  # fmt: skip
    where.add_argument("--user", dest="scope", action="store_const", const="user",
                       help="the user's settings, for every project")  # fmt: skip
    install.add_argument("--agent", dest="hook_agent_file", type=Path, metavar="FILE",
                         help="the agent file every event is judged by "
                              "(default: hookgate.yaml in the agent's project)")  # fmt: skip
    install.add_argument("--resident", action="store_true",
                         help="hand each event to a resident hookgate (started on first use, "
                              "ended when idle): a thin command instead of hookgate's start")  # fmt: skip
    install.add_argument("--uninstall", action="store_true", help="remove hookgate's entries")
    install.add_argument("-y", "--yes", action="store_true", help="write without asking")
    install.set_defaults(handler=run_install)


def protocol_of(name: str) -> AgentProtocol:
    """The hook protocol of the agent `name`, its module (alone) imported now."""
    protocol: AgentProtocol = _module(name).PROTOCOL()
    return protocol


def settings_of(name: str) -> HookSettings:
    """Where the agent `name` reads its hook settings, and the entries to write there."""
    settings: HookSettings = _module(name).settings()
    return settings


def _module(name: str) -> Any:
    # __import__, not importlib.import_module: an import `-X importtime` (and so
    # tests/agent_clis/test_hook_startup.py) sees.
    return __import__(AGENT_MODULES[name], fromlist=["PROTOCOL"])


def run_hook(args: argparse.Namespace) -> int:
    if args.remote is not None:
        import os

        from hookgate.serve.remote import remote_hook

        reply = remote_hook(protocol_of(args.agent_name), sys.stdin.read(), args.remote, os.environ)
    else:
        from hookgate.agents.hookrun import run_agent_hook

        reply = run_agent_hook(
            protocol_of(args.agent_name), sys.stdin.read(), agent_file=args.hook_agent_file
        )
    sys.stdout.write(reply.stdout)
    sys.stderr.write(reply.stderr)
    return reply.exit_code


def run_install(args: argparse.Namespace) -> int:
    from hookgate.agents.install import apply_change, hook_command, hookgate_program, plan_install

    settings = settings_of(args.agent_name)
    base = Path.home() if args.scope == "user" else Path.cwd()
    path = base / (settings.user_file if args.scope == "user" else settings.project_file)
    # An absolute user_file (Codex's $CODEX_HOME/hooks.json) stands as it is.
    command = hook_command(
        settings.agent, args.hook_agent_file, hookgate_program(), resident=args.resident
    )
    change = plan_install(settings, path, command, uninstall=args.uninstall)
    confirm = not args.yes and sys.stdin.isatty() and sys.stderr.isatty()
    if not change.changed:
        state = "not installed" if args.uninstall else "already installed"
        print(f"hookgate: {path}: {state}; nothing written", file=sys.stderr)
        return 0
    if not apply_change(change, confirm=confirm):
        print(f"hookgate: {path}: nothing written", file=sys.stderr)
        return 1
    done = "removed hookgate from" if args.uninstall else "hookgate runs on every event of"
    print(f"hookgate: {done} {path}", file=sys.stderr)
    if not args.uninstall:
        print(f"  {settings.approve}", file=sys.stderr)
        print("  hookgate runs only a trusted agent file: hookgate trust FILE", file=sys.stderr)
    return 0
