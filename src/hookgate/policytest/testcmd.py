"""`hookgate hooks test`: run test files of cases against an agent file's real gate.

Prints a line a case, a diff under each failure, then a count; exit 1 on any
failure (a case without `expect` fails too, until `--update` writes one). Every
file is read and checked before the first hook runs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from hookgate.hooks import ConfigError
from hookgate.hooks.files.yamlfile import did_you_mean
from hookgate.policytest.cases import Case, load_cases
from hookgate.policytest.evaluate import CaseResult, decided_by, diff_lines, run_case
from hookgate.policytest.gate import PolicyGate

#: Where `hooks test` looks for test files without any named: next to the agent file
#: (`*.hooktest.yaml`) and anywhere under this folder beside it.
TESTS_DIR = Path("tests") / "hooks"
SUFFIX = ".hooktest.yaml"
EXIT_OK, EXIT_FAILED = 0, 1

FileResults = tuple[Path, list[CaseResult]]


def default_files(agent_file: Path) -> list[Path]:
    """The test files of `agent_file`: `*.hooktest.yaml` beside it and under `tests/hooks/`."""
    folder = agent_file.parent
    found = sorted(folder.glob(f"*{SUFFIX}"))
    if (folder / TESTS_DIR).is_dir():
        found += sorted((folder / TESTS_DIR).rglob(f"*{SUFFIX}"))
    return found


def run_test_command(args: argparse.Namespace) -> int:
    files: list[Path] = list(args.files) or default_files(args.config)
    if not files:
        raise ConfigError(
            f"no test files: none named, and no *{SUFFIX} beside {args.config} or under "
            f"{args.config.parent / TESTS_DIR}",
            hint=f"write one (docs/testing-policy.md), e.g. {args.config.parent / ('policy' + SUFFIX)}",
        )
    loaded = [(path, load_cases(path)) for path in files]
    results = asyncio.run(run_files(args.config, loaded))
    failed = report(results, sys.stdout, agent_file=args.config)
    if args.junit is not None:
        from hookgate.policytest.junit import write_junit

        write_junit(args.junit, results)
    if args.update:
        from hookgate.policytest.update import write_answers

        for path, file_results in results:
            if written := write_answers(path, file_results):
                print(f"{path}: wrote the expected answer of {written} case(s)", file=sys.stderr)
        failed = sum(
            1 for _, rs in results for r in rs if not r.passed and r.case.expect is not None
        )
    return EXIT_FAILED if failed else EXIT_OK


async def run_files(
    agent_file: Path, files: Sequence[tuple[Path, list[Case]]]
) -> list[FileResults]:
    """Every case of every file through one gate of `agent_file`, in order."""
    gate = PolicyGate.open(agent_file)
    try:
        for _, cases in files:
            for case in cases:
                _check_tool(gate, case, agent_file)
        return [(path, [await run_case(gate, case) for case in cases]) for path, cases in files]
    finally:
        await gate.aclose()


def _check_tool(gate: PolicyGate, case: Case, agent_file: Path) -> None:
    """A case's tool must be one the agent offers: its file's, `ask_agent` where it names
    agents, the team's tools where it has one, an MCP tool where it has servers."""
    from hookgate.config.agentfile import offered_tool_names

    if case.event == "preGeneration" or gate.offers(case.tool):
        return
    offered = list(offered_tool_names(agent_file) or gate.gate.tools.names())
    mcp = case.tool.startswith("mcp__") and bool(gate.config.mcp_servers)
    if mcp or case.tool in offered:
        gate.add_tool(case.tool)
        return
    hint = did_you_mean(case.tool, offered) or f"{agent_file} offers: {', '.join(offered)}"
    raise case.where.error(f"tool {case.tool!r} is not offered by {agent_file}", hint=hint)


def report(results: Sequence[FileResults], out: TextIO, *, agent_file: Path) -> int:
    """Print a line a case, a diff under each failure and the count; the failures."""
    failed = total = 0
    for path, file_results in results:
        print(f"{path}  (agent {agent_file})", file=out)
        for result in file_results:
            total += 1
            verdict = result.verdict
            if result.passed:
                print(f"  ok    {result.case.name}  → {verdict.decision} ({decided_by(verdict)})",
                      file=out)  # fmt: skip
                continue
            failed += 1
            line = f":{result.case.where.line}" if result.case.where.line else ""
            print(f"  FAIL  {result.case.name}  ({path}{line})", file=out)
            for diff in diff_lines(result):
                print(f"        {diff}", file=out)
    passed = total - failed
    print(f"\n{total} case{'s' if total != 1 else ''}: {passed} passed, {failed} failed", file=out)
    return failed
