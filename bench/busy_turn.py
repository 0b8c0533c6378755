"""A process hook inside a busy turn, against the same hook alone, in one run.

The agent of `bench/runtime_turn.py` (a `command: "true"` hook on preToolCall and
postToolCall, the loopback chat server in a process of its own, streamed replies,
K=5 echo calls a turn) plays turns; each `engine.run` of the hook inside a turn is
timed (the engine's `run` wrapped, bench-only). Between two turns the same engine
runs the same event alone, as many times, on the same loop with nothing else to do.
Prints the medians, the 90th percentiles and their ratio, in wall-clock time and in
CPU time of the agent's process (which neither the server nor the hook's own process
nor a neighbour inflates).

    .venv/bin/python bench/busy_turn.py [--turns N]

It imports `bench/runtime_turn.py`, and with it the OpenAI Agents SDK (`pip install
openai-agents`), though it does not run the SDK.
"""

from __future__ import annotations

import argparse
import asyncio
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
from hookgate.session import SessionStore

K = 5
EVENT = ("preToolCall", {"tool": "echo", "arguments": {"text": "hi"}})


async def measure(server: ServerProcess, scratch: Path, turns: int) -> dict[str, list[float]]:
    tally = Tally()
    agent_file = write_agent_file(scratch, server.url, {"command": "true"})
    contender = await Hookgate.open("hook", agent_file, SessionStore(scratch / "home"), tally)
    engine = contender._agent.engine
    inside: list[float] = []
    inside_cpu: list[float] = []
    run = engine.run

    async def timed(event: str, payload: Mapping[str, Any]) -> Outcome:
        started, cpu = time.perf_counter(), time.process_time()
        try:
            return await run(event, payload)
        finally:
            if event in ("preToolCall", "postToolCall"):
                inside.append(time.perf_counter() - started)
                inside_cpu.append(time.process_time() - cpu)

    engine.run = timed  # type: ignore[method-assign]
    alone: list[float] = []
    alone_cpu: list[float] = []
    alone_run: Callable[[], Awaitable[Outcome]] = lambda: run(*EVENT)  # noqa: E731
    try:
        for index in range(turns + 1):
            server.queue_turn(K)
            contender.reset()
            gc.collect()
            before = len(inside)
            await contender.turn()
            if index == 0:  # warm-up
                del inside[before:], inside_cpu[before:]
                continue
            for _ in range(2 * K):
                started, cpu = time.perf_counter(), time.process_time()
                await alone_run()
                alone.append(time.perf_counter() - started)
                alone_cpu.append(time.process_time() - cpu)
    finally:
        await contender.aclose()
    return {
        "alone": alone,
        "inside a turn": inside,
        "alone, CPU time of the agent": alone_cpu,
        "inside a turn, CPU time of the agent": inside_cpu,
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
        lines.append(f"| {name} | {len(values)} | {median * 1e3:.3f} ms | {p90 * 1e3:.3f} ms | "
                     f"{median / alone:.2f}× |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args()
    adopt_orphans()
    with ServerProcess() as server, tempfile.TemporaryDirectory() as scratch:
        print(report(asyncio.run(measure(server, Path(scratch), args.turns))))


if __name__ == "__main__":
    main()
