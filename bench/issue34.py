"""Issue 34's goals in one run, each a ratio to a baseline of the same run, with the load.

- process hooks: `run_sync` and `await run` against the spawn floor, in each of `--runs`
  runs of `bench/peers.py` (call by call, median of its rounds); goal <= 1.2x in all;
- persistent hooks against the bare exchange with the same child, both drivers, call by
  call and in blocks with every child on the benchmark's processor and on another
  (the same runs); goal <= 1.3x in every placement;
- start-up: `hooks fire` and `-p` (scripted model) against `python -c pass`, wall
  clock, in rotating rounds (`bench/startup.py`'s project); goals <= 3x and <= 5x;
- a 50 MB tool result through `postToolCall`, to a process hook and to a persistent
  one, both drivers: the peak of Python's memory during the call (tracemalloc, in a
  process of its own) and the peak RSS the call added, each in copies of the result;
  goal <= 1 copy.

    .venv/bin/python bench/issue34.py [--runs 6] [--startup-rounds 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from peers import measure
from startup import HOOKGATE, PYTHON, make_project, timed_run

from hookgate.hooks import adopt_orphans

RESULT_SIZE = 50_000_000
#: A persistent hook that reads each event line whole and allows.
READER = (
    "import sys\n"
    "for line in sys.stdin.buffer:\n"
    "    number = int(line[len(b'{\"id\":') : line.index(b',')])\n"
    '    sys.stdout.write(\'{"id": %d, "reply": null}\\n\' % number)\n'
    "    sys.stdout.flush()\n"
)
#: One postToolCall with a 50 MB result, to a process hook or a persistent one (started
#: by a small event first); prints tracemalloc's peak during the call and the peak RSS
#: (KiB) before and after it.
LARGE_EVENT = textwrap.dedent(
    """
    import asyncio, resource, sys, tracemalloc
    from pathlib import Path
    from hookgate.hooks import HookEngine, parse_hooks
    from hookgate.hooks.files.yamlfile import Where

    driver, kind, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    hook = {"command": "cat > /dev/null"}
    if kind == "persistent":
        hook = {"args": [sys.executable, "-c", sys.argv[4]], "persistent": True}
    config = parse_hooks({"postToolCall": [hook]}, Where("b.yaml"), base_dir=Path.cwd())
    engine = HookEngine(config, session_id="large")
    result = {"content": ("x" * 79 + "\\n") * (size // 80), "is_error": False}
    payload = {"tool": "shell", "arguments": {"command": "cat log"}, "result": result}
    small = {"tool": "shell", "arguments": {}, "result": {}}

    def measured(outcome, before):
        assert outcome.hooks_run == 1 and not outcome.errors, outcome.errors
        return tracemalloc.get_traced_memory()[1] - before

    # Under `await run` the outcome stays inside the coroutine, as in an agent's loop:
    # asyncio.run's clean-up on Python 3.11 would take the repr of a returned one whole.
    async def run():
        await engine.run("postToolCall", small)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        traced = measured(await engine.run("postToolCall", payload), before)
        await engine.aclose()
        return traced, rss

    if driver == "sync":
        engine.run_sync("postToolCall", small)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        traced = measured(engine.run_sync("postToolCall", payload), before)
        engine.close()
    else:
        traced, rss = asyncio.run(run())
    print(traced, rss, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """
)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


def hook_runs(runs: int) -> list[str]:
    """The process and persistent hooks' ratios, one line per run of `bench/peers.py`."""
    adopt_orphans()
    lines = [
        "| run | load | run_sync | await run | persistent run_sync: call by call, "
        "one processor, another | persistent await run: the same |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for run in range(1, runs + 1):
        results, _, pinned = measure(5, 150, 15)
        cells = [f"{_median(results, name, 'floor'):.3f}×" for name in ("run_sync", "await run")]
        for driver in ("persistent run_sync", "persistent await run"):
            places = [results, *pinned.values()]
            cells.append(", ".join(f"{_median(p, driver, 'ping-pong'):.2f}×" for p in places))
        lines.append(f"| {run} | {os.getloadavg()[0]:.2f} | {' | '.join(cells)} |")
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


def _median(rounds: list[dict[str, float]], name: str, base: str) -> float:
    return statistics.median(r[name] / r[base] for r in rounds)


def startup(rounds: int) -> list[str]:
    """Wall-clock (and CPU) ratios of `hooks fire` and `-p` to `python -c pass`."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        env = make_project(root)
        fire = [*HOOKGATE, "hooks", "fire", "preToolCall", "--tool", "shell"]
        commands = {
            "python -c pass": ([PYTHON, "-c", "pass"], b""),
            "hooks fire": (fire, b"{}"),
            "-p hi": ([*HOOKGATE, "-p", "hi"], b""),
        }
        for argv, stdin in commands.values():  # byte code and page cache warm
            timed_run(argv, root, env, stdin)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        names = list(commands)
        for index in range(rounds):
            for name in names[index % 3 :] + names[: index % 3]:
                argv, stdin = commands[name]
                samples[name].append(timed_run(argv, root, env, stdin))
    base = samples["python -c pass"]
    lines = []
    for name, goal in (("hooks fire", 3), ("-p hi", 5)):
        walls = sorted(s[0] / b[0] for s, b in zip(samples[name], base, strict=True))
        cpus = [s[1] / b[1] for s, b in zip(samples[name], base, strict=True)]
        lines.append(
            f"- {name}: {statistics.median(walls):.2f}× `python -c pass` (wall, p10–p90 "
            f"{walls[len(walls) // 10]:.2f}–{walls[len(walls) * 9 // 10]:.2f}; "
            f"{statistics.median(s[0] for s in samples[name]) * 1000:.1f} against "
            f"{statistics.median(b[0] for b in base) * 1000:.1f} ms; CPU "
            f"{statistics.median(cpus):.2f}×); goal ≤ {goal}×"
        )
    return lines


def large_event() -> list[str]:
    lines = []
    for kind in ("process", "persistent"):
        for driver in ("sync", "async"):
            done = subprocess.run(
                [PYTHON, "-c", LARGE_EVENT, driver, kind, str(RESULT_SIZE), READER],
                capture_output=True, text=True, check=True, timeout=300,
            )  # fmt: skip
            traced, rss_before, rss_after = (int(word) for word in done.stdout.split())
            lines.append(
                f"- 50 MB result, {kind} hook, "
                f"{'run_sync' if driver == 'sync' else 'await run'}: Python's peak "
                f"{traced / RESULT_SIZE:.2f} copies, peak RSS "
                f"+{(rss_after - rss_before) * 1024 / RESULT_SIZE:.2f} copies; goal ≤ 1"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6, help="runs of bench/peers.py")
    parser.add_argument("--startup-rounds", type=int, default=20)
    args = parser.parse_args()
    lines = [f"Before: {load()} ({os.cpu_count()} cores)", ""]
    lines += hook_runs(args.runs)
    lines += ["", *startup(args.startup_rounds), *large_event(), "", f"After: {load()}"]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
