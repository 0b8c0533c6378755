"""The runtime's `hooks` commands: `test` and `replay`, registered from `hookgate.cli`.

They need the agent runtime (its gate, its sessions), which the hooks engine's own
commands must not import; registering them costs argparse alone, and each handler
imports its module when it runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_AGENT_FILE = Path("hookgate.yaml")


def add_test_arguments(test: argparse.ArgumentParser) -> None:
    """Add the arguments of `hookgate hooks test` to its parser (`hookgate.cli` names it)."""
    test.add_argument("files", nargs="*", type=Path, metavar="FILE",
                      help="test files (default: *.hooktest.yaml beside the agent file "
                           "and under its tests/hooks/)")  # fmt: skip
    _agent_option(test)
    test.add_argument("--junit", type=Path, metavar="PATH", help="also write JUnit XML here")
    test.add_argument("--update", action="store_true",
                      help="write the current answers into the cases that have no expect")  # fmt: skip
    test.set_defaults(handler=_run_test)


def add_replay_arguments(replay: argparse.ArgumentParser) -> None:
    """Add the arguments of `hookgate hooks replay` to its parser (`hookgate.cli` names it)."""
    replay.add_argument("sources", nargs="+", metavar="SOURCE",
                        help="a hookgate session id or file, a Claude Code transcript, a "
                             "Codex rollout or a Gemini CLI chat file")  # fmt: skip
    _agent_option(replay)
    replay.add_argument("--json", action="store_true", help="print JSON for machines")
    replay.add_argument("--all-events", action="store_true",
                        help="run every event's hooks, not only the deciding ones")  # fmt: skip
    replay.set_defaults(handler=_run_replay)


def _agent_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", "--config", dest="config", type=Path, metavar="FILE",
                        default=DEFAULT_AGENT_FILE,
                        help=f"the agent file (default: ./{DEFAULT_AGENT_FILE})")  # fmt: skip


def _run_test(args: argparse.Namespace) -> int:
    from hookgate.policytest.testcmd import run_test_command

    return run_test_command(args)


def _run_replay(args: argparse.Namespace) -> int:
    from hookgate.policytest.replay.command import run_replay_command

    return run_replay_command(args)


def test_file_schema() -> dict[str, Any]:
    """The JSON Schema of a test file (`hookgate hooks schema --tests`)."""
    from hookgate.policytest.schema import TEST_FILE_SCHEMA

    return TEST_FILE_SCHEMA
