"""What running each shell command under `reaper.py` costs, next to bare `bash -c`.

The shell tool starts `python -I -S reaper.py LIMITS -- bash -c COMMAND` so that
nothing the command starts outlives the call, and to set its limits. This runs
`ShellTool` on `true` and `run_process` on `bash -c true` alternately, in one event
loop, and prints the medians.

    .venv/bin/python bench/shell_call.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

from hookgate.hooks import adopt_orphans
from hookgate.hooks.process import run_process
from hookgate.tools import ToolContext
from hookgate.tools.shell import ShellTool

WARMUP = 10  # rounds not counted


async def measure(rounds: int) -> tuple[list[float], list[float]]:
    ctx = ToolContext(project_dir=Path.cwd(), env=dict(os.environ))
    tool = ShellTool()
    bare: list[float] = []
    reaped: list[float] = []
    for index in range(WARMUP + rounds):
        started = time.perf_counter()
        await run_process(["bash", "-c", "true"], env=ctx.env, timeout=10)
        middle = time.perf_counter()
        result = await tool.run({"command": "true"}, ctx)
        assert not result.is_error, result.content
        if index >= WARMUP:
            bare.append(middle - started)
            reaped.append(time.perf_counter() - middle)
    return bare, reaped


def main(rounds: int) -> None:
    adopt_orphans()
    bare, reaped = asyncio.run(measure(rounds))
    base = statistics.median(bare) * 1e3
    tool = statistics.median(reaped) * 1e3
    print(f"| what (median of {rounds}) | ms | vs bare |")
    print("| --- | ---: | ---: |")
    print(f"| `run_process` of `bash -c true` (baseline) | {base:.2f} | 1.00× |")
    print(f"| `ShellTool` on `true`: reaper, limits, bash | {tool:.2f} | {tool / base:.2f}× |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    main(parser.parse_args().rounds)
