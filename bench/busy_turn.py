"""A process hook inside a busy turn, against the same hook alone, in one run.

The agent of `bench/runtime_turn.py` (a `command: "true"` hook on preToolCall and
postToolCall, the loopback chat server in a process of its own, streamed replies,
K=5 echo calls a turn) plays turns; each `engine.run` of the hook inside a turn is
timed (the engine's `run` wrapped, bench-only). Between two turns the same engine
runs the same event alone, as many times, on the same loop with nothing else to do.
Prints the medians, the 90th percentiles and their ratio, in wall-clock time and in
CPU time of the agent's process (which neither the server nor the hook's own process
nor a neighbour inflates). It also reports how much CPU time the model server used
while each hook inside a turn ran (from /proc, read just outside the timed window):
the server is the one process of the turn that competes with the hook for a core.
`--server-nice N` runs the server at that niceness, to see how much of the
difference its competition accounts for.

    .venv/bin/python bench/busy_turn.py [--turns N] [--server-nice N]

It imports `bench/runtime_turn.py`, and with it the OpenAI Agents SDK (`pip install
openai-agents`), though it does not run the SDK.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from runtime_turn import Hookgate, ServerProcess, Tally, write_agent_file

from hookgate.hooks import Outcome, adopt_orphans
from hookgate.store.session import SessionStore

K = 5
EVENT = ("preToolCall", {"tool": "echo", "arguments": {"text": "hi"}})


def cpu_seconds(pid: int) -> float:
    """CPU time of every thread of `pid` so far, in seconds (ns-precise, from schedstat)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            total += int(stat.read_text().split()[0])
    return total / 1e9


async def measure(server: ServerProcess, scratch: Path, turns: int) -> dict[str, list[float]]:
    tally = Tally()
    agent_file = write_agent_file(scratch, server.url, {"command": "true"})
    contender = await Hookgate.open("hook", agent_file, SessionStore(scratch / "home"), tally)
    engine = contender._agent.engine
    inside: list[float] = []
    inside_cpu: list[float] = []
    server_cpu: list[float] = []
    gaps: list[float] = []  # how long the agent had been away from hooks before each
    last_end = time.perf_counter()
    run = engine.run

    async def timed(event: str, payload: Mapping[str, Any], **options: Any) -> Outcome:
        if event not in ("preToolCall", "postToolCall"):
            return await run(event, payload, **options)
        nonlocal last_end
        server_before = cpu_seconds(server.pid)
        started, cpu = time.perf_counter(), time.process_time()
        try:
            return await run(event, payload, **options)
        finally:
            gaps.append(started - last_end)
            last_end = time.perf_counter()
            inside.append(last_end - started)
            inside_cpu.append(time.process_time() - cpu)
            server_cpu.append(cpu_seconds(server.pid) - server_before)

    engine.run = timed  # type: ignore[method-assign]
    alone: list[float] = []
    alone_cpu: list[float] = []
    paused: list[float] = []
    alone_run: Callable[[], Awaitable[Outcome]] = lambda: run(*EVENT)  # noqa: E731
    try:
        for index in range(turns + 1):
            server.queue_turn(K)
            contender.reset()
            gc.collect()
            before = len(inside)
            last_end = time.perf_counter()
            await contender.turn()
            if index == 0:  # warm-up
                del inside[before:], inside_cpu[before:], server_cpu[before:], gaps[before:]
                continue
            for gap in gaps[before:]:
                # The same hook after the same idle time as its run in the turn: what an
                # idle machine costs a start (an idle core to wake) is then in both.
                await asyncio.sleep(gap)
                started = time.perf_counter()
                await alone_run()
                paused.append(time.perf_counter() - started)
                started, cpu = time.perf_counter(), time.process_time()
                await alone_run()
                alone.append(time.perf_counter() - started)
                alone_cpu.append(time.process_time() - cpu)
    finally:
        await contender.aclose()
    return {
        "alone": alone,
        "inside a turn": inside,
        "alone, after the idle time it had in the turn": paused,
        "alone, CPU time of the agent": alone_cpu,
        "inside a turn, CPU time of the agent": inside_cpu,
        "inside a turn, CPU time of the server meanwhile": server_cpu,
        "idle time before a hook in the turn": gaps,
    }


def report(samples: dict[str, list[float]]) -> str:
    lines = [
        f"load average {os.getloadavg()[0]:.2f}",
        "",
        '| one `command: "true"` hook | runs | median | p90 | median vs alone |',
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, values in samples.items():
        base = "alone, CPU time of the agent" if "CPU" in name else "alone"
        alone = statistics.median(samples[base])
        ordered = sorted(values)
        median = statistics.median(ordered)
        p90 = ordered[len(ordered) * 9 // 10]
        ratio = "" if "meanwhile" in name or "before" in name else f"{median / alone:.2f}×"
        lines.append(f"| {name} | {len(values)} | {median * 1e3:.3f} ms | {p90 * 1e3:.3f} ms | "
                     f"{ratio} |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--server-nice", type=int, default=0, help="the server's niceness")
    args = parser.parse_args()
    adopt_orphans()
    with ServerProcess() as server, tempfile.TemporaryDirectory() as scratch:
        for thread in Path(f"/proc/{server.pid}/task").iterdir():  # those it starts inherit it
            os.setpriority(os.PRIO_PROCESS, int(thread.name), args.server_nice)
        print(f"server niceness {args.server_nice}")
        print(report(asyncio.run(measure(server, Path(scratch), args.turns))))


if __name__ == "__main__":
    main()
