"""What screening each tool call again right before it runs costs a turn.

A model reply with K `read_file` calls is screened up front (K preToolCall runs, for
the record) and again before each call after the first (K-1 more). This plays that
turn with the scripted model and a `command: "true"` preToolCall hook, next to the
same turn whose hook matches no tool (the baseline: no hook runs), and prints the
turn times and the cost of one preToolCall run measured in the same rounds.

    .venv/bin/python bench/rescreen.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from hookgate.hooks import adopt_orphans
from hookgate.runtime.agent import open_agent
from hookgate.runtime.consent import AlwaysDeny
from hookgate.runtime.turn import Answered, run_turn
from hookgate.store.session import SessionStore
from hookgate.view import QuietView

CALLS = 8  # K: tool calls in the one model reply
WARMUP = 5  # rounds not counted: imports, caches


async def one_turn(project: Path, matcher: str) -> tuple[float, float]:
    """Seconds of one turn, and of one preToolCall run of the same engine."""
    calls = [{"name": "read_file", "arguments": {"path": "f.txt"}}] * CALLS
    (project / "script.yaml").write_text(json.dumps([{"tool_calls": calls}, {"text": "ok"}]))
    hook = {"name": "true", "matcher": matcher, "command": "true"}
    agent_file = project / "hookgate.yaml"
    agent_file.write_text(json.dumps({"model": "scripted:script.yaml", "tools": ["read_file"],
                                      "hooks": {"preToolCall": [hook]}}))  # fmt: skip
    agent = await open_agent(
        agent_file, notify=lambda _: None, consent=AlwaysDeny(),
        store=SessionStore(project / "home"), project_dir=project,
    )  # fmt: skip
    try:
        started = time.perf_counter()
        outcome = await run_turn(agent, "read", QuietView())
        turn = time.perf_counter() - started
        assert isinstance(outcome, Answered), outcome
        started = time.perf_counter()
        await agent.engine.run("preToolCall", {"tool": "read_file", "arguments": {"path": "x"}})
        return turn, time.perf_counter() - started
    finally:
        await agent.aclose()


async def measure(project: Path, rounds: int) -> tuple[list[float], list[float], list[float]]:
    """Turn times with the hook, without it, and one hook run alone; warm-up left out."""
    hooked: list[float] = []
    bare: list[float] = []
    per_run: list[float] = []
    for index in range(WARMUP + rounds):
        with_hook, one_run = await one_turn(project, "^read_file$")
        without, _ = await one_turn(project, "^nothing$")
        if index >= WARMUP:
            hooked.append(with_hook)
            bare.append(without)
            per_run.append(one_run)
    return hooked, bare, per_run


def main(rounds: int) -> None:
    adopt_orphans()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp).resolve()
        (project / "f.txt").write_text("x\n")
        hooked, bare, per_run = asyncio.run(measure(project, rounds))
    hook_ms = statistics.median(hooked) * 1e3
    bare_ms = statistics.median(bare) * 1e3
    run_ms = statistics.median(per_run) * 1e3
    # The hook's cost in the turn, shared out over its runs: K-1 of 2K-1 are the re-screen.
    extra = (hook_ms - bare_ms) * (CALLS - 1) / (2 * CALLS - 1)
    print(f"| what (K={CALLS} calls in one reply, median of {rounds}) | ms |")
    print("| --- | ---: |")
    print(f"| turn, preToolCall hook matches no call (baseline) | {bare_ms:.2f} |")
    print(f'| turn, `command: "true"` preToolCall hook: {2 * CALLS - 1} runs | {hook_ms:.2f} |')
    print(f"| one preToolCall run of that hook, alone | {run_ms:.2f} |")
    print(f"| the re-screen's share: {CALLS - 1} runs | {extra:.2f} "
          f"({extra / hook_ms:.0%} of the turn) |")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    main(parser.parse_args().rounds)
