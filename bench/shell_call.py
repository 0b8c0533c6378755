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
import resource
import statistics
import tempfile
import time
from pathlib import Path

from hookgate.hooks import adopt_orphans
from hookgate.hooks.process import run_process
from hookgate.tools import ToolContext
from hookgate.tools.sandbox import SandboxSettings
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


Samples = dict[str, list[tuple[float, float]]]


def children_cpu() -> float:
    """CPU seconds of every reaped descendant so far (each waited-for child counts its own)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def measure(rounds: int, scratch: Path) -> Samples:
    """Per call: (wall, children's CPU) for the baseline, the sandbox off and on, in turn."""
    off = ToolContext(project_dir=Path.cwd(), env=dict(os.environ))
    on = confined(off, scratch)
    tool = ShellTool()

    async def bare() -> None:
        await run_process(["bash", "-c", "true"], env=off.env, timeout=10)

    async def shell(ctx: ToolContext) -> None:
        result = await tool.run({"command": "true"}, ctx)
        assert not result.is_error, result.content

    runs = {"bare": bare, "off": lambda: shell(off), "on": lambda: shell(on)}
    samples: Samples = {name: [] for name in runs}
    for index in range(WARMUP + rounds):
        for name, run in runs.items():
            wall, cpu = time.perf_counter(), children_cpu()
            await run()
            if index >= WARMUP:
                samples[name].append((time.perf_counter() - wall, children_cpu() - cpu))
    return samples


def main(rounds: int) -> None:
    adopt_orphans()
    with tempfile.TemporaryDirectory() as scratch:
        samples = asyncio.run(measure(rounds, Path(scratch)))

    def median(name: str, part: int) -> float:
        return statistics.median(sample[part] for sample in samples[name]) * 1e3

    def added(part: int) -> float:
        pairs = zip(samples["on"], samples["off"], strict=True)
        return statistics.median(on[part] - off[part] for on, off in pairs) * 1e3

    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"| what (median of {rounds}) | wall ms | children's CPU ms |")
    print("| --- | ---: | ---: |")
    rows = {
        "bare": "`run_process` of `bash -c true` (baseline)",
        "off": "`ShellTool` on `true`, sandbox off: reaper, limits, bash",
        "on": "`ShellTool` on `true`, default sandbox: bubblewrap too",
    }
    for name, label in rows.items():
        print(f"| {label} | {median(name, 0):.2f} | {median(name, 1):.2f} |")
    print(f"| the sandbox's added cost, call by call | {added(0):.2f} | {added(1):.2f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    main(parser.parse_args().rounds)
