"""Record how long the whole test suite took, for docs/reliability.md's "whole suite" table.

    python scripts/suite_times.py --command ./scripts/test --machine quiet \
        --total SECONDS --log PYTEST_LOG [--load-start L] [--file docs/suite-times.json]

Reads pytest's last summary line in PYTEST_LOG (`3045 passed, 2 skipped in 789.12s`),
the load average now, the commit, and writes one row to FILE: the latest run of a
command on a kind of machine (quiet, saturated) replaces the one before. Run by
`scripts/test --record` and `scripts/test-saturated --whole --record`;
`scripts/render_reliability.py` renders FILE, so the page's figures are measured ones.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: pytest's closing line: counts, then the time (`in 789.12s (0:13:09)`).
_SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ \w+(?:, \d+ \w+)*) in (?P<seconds>[\d.]+)s\b")
_COUNT = re.compile(r"(\d+) (\w+)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--command", required=True, help="what ran, as the page names it")
    parser.add_argument("--machine", required=True, choices=("quiet", "saturated"))
    parser.add_argument("--total", type=float, required=True, help="seconds of the command")
    parser.add_argument("--log", type=Path, required=True, help="pytest's output")
    parser.add_argument("--load-start", type=float, help="the load average at the start")
    parser.add_argument("--file", type=Path, default=Path("docs/suite-times.json"))
    args = parser.parse_args(argv)
    try:
        summary = pytest_summary(args.log.read_text(errors="replace"))
    except OSError as exc:
        print(f"suite_times: cannot read {args.log}: {exc.strerror}", file=sys.stderr)
        return 1
    if summary is None:
        print(f"suite_times: no pytest summary line in {args.log}", file=sys.stderr)
        return 1
    row = {
        "command": args.command,
        "machine": args.machine,
        "total_s": round(args.total),
        **summary,
        "load": _load(args.load_start),
        "commit": _commit(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
    }
    record(args.file, row)
    print(f"suite_times: {args.command} on a {args.machine} machine -> {args.file}")
    return 0


def pytest_summary(log: str) -> dict[str, Any] | None:
    """pytest's seconds and counts (`{"pytest_s": 789.1, "passed": 3045, ...}`) from
    the last summary line of `log`, or None where there is none."""
    for line in reversed(log.splitlines()):
        found = _SUMMARY.match(line.strip())
        if found:
            counts = {kind: int(n) for n, kind in _COUNT.findall(found["counts"])}
            return {"pytest_s": round(float(found["seconds"]), 1), **counts}
    return None


def record(path: Path, row: dict[str, Any]) -> None:
    """Write `row` into the rows of `path`, in place of the one of the same command and
    machine (a file that does not exist yet starts empty)."""
    try:
        rows = json.loads(path.read_text())
    except FileNotFoundError:
        rows = []
    rows = [
        r for r in rows if (r.get("command"), r.get("machine")) != (row["command"], row["machine"])
    ]
    rows.append(row)
    path.write_text(json.dumps(rows, indent=2) + "\n")


def _load(start: float | None) -> str:
    now = os.getloadavg()[0]
    return f"{start:.1f}–{now:.1f}" if start is not None else f"{now:.1f}"


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return done.stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
