"""What running each shell command under `reaper.py` and in the sandbox costs, next to
bare `bash -c`.

The shell tool starts `python -I -S reaper.py LIMITS -- bash -c COMMAND` so that
nothing the command starts outlives the call, and to set its limits; with the sandbox
on (the default) all of it runs under bubblewrap. This runs `run_process` on
`bash -c true`, `ShellTool` on `true` with `sandbox: {mode: off}`, and `ShellTool` on
`true` in the default sandbox (a project with an agent file and two trusted hook
scripts in it, `$HOOKGATE_HOME` hidden), in turn, in one event loop, and prints the
medians of each and of the sandbox's added cost call by call.

    .venv/bin/python bench/shell_call.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from hookgate.hooks import adopt_orphans
from hookgate.hooks.process import run_process
from hookgate.sandbox import SandboxSettings
from hookgate.tools import ToolContext
from hookgate.tools.shell import ShellTool

WARMUP = 10  # rounds not counted


def confined(off: ToolContext, scratch: Path) -> ToolContext:
    """`off` in the default sandbox, with what a real session protects and hides."""
    project, home, tmp = scratch / "project", scratch / "home", scratch / "tmp"
    (project / "hooks").mkdir(parents=True)
    home.mkdir()
    protected = [project / "hookgate.yaml", project / "hooks" / "a.sh", project / "hooks" / "b.sh"]
    for path in protected:
        path.write_text("x\n")
    return off._replace(
        project_dir=project, hookgate_home=home, protected_files=frozenset(protected),
        sandbox=SandboxSettings(), private_tmp=tmp,
    )  # fmt: skip


async def measure(rounds: int, scratch: Path) -> tuple[list[float], list[float], list[float]]:
    off = ToolContext(project_dir=Path.cwd(), env=dict(os.environ))
    on = confined(off, scratch)
    tool = ShellTool()
    bare: list[float] = []
    reaped: list[float] = []
    sandboxed: list[float] = []
    for index in range(WARMUP + rounds):
        started = time.perf_counter()
        await run_process(["bash", "-c", "true"], env=off.env, timeout=10)
        middle = time.perf_counter()
        result = await tool.run({"command": "true"}, off)
        assert not result.is_error, result.content
        third = time.perf_counter()
        result = await tool.run({"command": "true"}, on)
        assert not result.is_error, result.content
        if index >= WARMUP:
            bare.append(middle - started)
            reaped.append(third - middle)
            sandboxed.append(time.perf_counter() - third)
    return bare, reaped, sandboxed


def main(rounds: int) -> None:
    adopt_orphans()
    with tempfile.TemporaryDirectory() as scratch:
        bare, reaped, sandboxed = asyncio.run(measure(rounds, Path(scratch)))
    base = statistics.median(bare) * 1e3
    tool = statistics.median(reaped) * 1e3
    boxed = statistics.median(sandboxed) * 1e3
    added = statistics.median(b - r for b, r in zip(sandboxed, reaped, strict=True)) * 1e3
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"| what (median of {rounds}) | ms | vs bare |")
    print("| --- | ---: | ---: |")
    print(f"| `run_process` of `bash -c true` (baseline) | {base:.2f} | 1.00× |")
    print(f"| `ShellTool` on `true`, sandbox off: reaper, limits, bash | {tool:.2f} | "
          f"{tool / base:.2f}× |")  # fmt: skip
    print(f"| `ShellTool` on `true`, default sandbox: bubblewrap too | {boxed:.2f} | "
          f"{boxed / base:.2f}× |")  # fmt: skip
    print(f"| the sandbox's added cost, call by call (median) | {added:.2f} | |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    main(parser.parse_args().rounds)
