"""Two team tasks at once: the wall time of a supervisor's turn that hands two tasks of
1 s each to two members, against one such task alone and against the two one after the
other (`max_parallel: 1`), all measured in the same run, rounds interleaved.

Every task is what a user's is: a separate `hookgate` child process of the member
(its start-up, its trust check, its session file), whose scripted model takes 1 s to
answer; with its byte code cached, as an installed package has it. The supervisor's own model answers at once, so the turn's time is the team's.
A task whose model answers at once shows what the hand-off itself costs. The issue's
bound: two 1 s tasks under 1.6 s of wall time. Prints a Markdown table.

    .venv/bin/python bench/team_parallel.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hookgate.runtime.agent import open_agent
from hookgate.runtime.consent import AlwaysDeny
from hookgate.runtime.turn import Answered, run_turn
from hookgate.security.trust.record import trust_agent_file
from hookgate.security.trust.store import TrustStore
from hookgate.store.session import SessionStore
from hookgate.view import QuietView

#: Seconds each member's model takes: the length of one task.
TASK_S = 1.0
#: The issue's bound on two tasks run at once.
BOUND_S = 1.6
#: label: (tasks, max_parallel, seconds each member's model takes)
CONTENDERS = {
    "one task alone (baseline)": (1, 2, TASK_S),
    "two tasks, max_parallel 2": (2, 2, TASK_S),
    "two tasks, max_parallel 1": (2, 1, TASK_S),
    "one 0 s task (what a hand-off costs)": (1, 2, 0.0),
}


def write_agent(folder: Path, replies: list[dict[str, Any]], **settings: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "script.yaml").write_text(json.dumps(replies))
    (folder / "hookgate.yaml").write_text(json.dumps({"model": "scripted:script.yaml", **settings}))
    return folder / "hookgate.yaml"


def make_team(root: Path, tasks: int, max_parallel: int, delay: float) -> Path:
    members = {}
    for name in ("reviewer", "tester"):
        folder = root / f"{name}-{delay:g}"
        file = write_agent(folder, [{"delay": delay, "text": f"{name}: done"}])
        members[name] = {"file": str(file)}
    creates = [
        {"name": "create_task", "arguments": {"subject": f"task {n}", "description": "do it",
                                               "member": member}}
        for n, member in zip(range(tasks), members, strict=False)
    ]  # fmt: skip
    wait = {"name": "wait_for_tasks", "arguments": {}}
    supervisor = write_agent(
        root / f"supervisor-{tasks}-{max_parallel}-{delay:g}",
        [{"tool_calls": [*creates, wait]}, {"text": "All done."}],
        yolo=True,
        team={"name": "bench", "members": members, "max_parallel": max_parallel},
    )
    trust_agent_file(supervisor, store=TrustStore(root / "home"))
    return supervisor


async def one_turn(supervisor: Path, tasks: int, home: Path, project: Path) -> float:
    agent = await open_agent(
        supervisor, notify=lambda _: None, consent=AlwaysDeny(), store=SessionStore(home),
        project_dir=project,
    )  # fmt: skip
    try:
        started = time.perf_counter()
        outcome = await run_turn(agent, "Go.", QuietView())
        elapsed = time.perf_counter() - started
    finally:
        await agent.aclose()
    assert outcome == Answered("All done."), outcome
    waited = agent.history.messages[-2].content  # what wait_for_tasks returned
    assert waited.count("[done]") == tasks, waited
    return elapsed


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["HOOKGATE_HOME"] = str(root / "home")  # the children's trust store too
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc
        project = root / "project"
        project.mkdir()
        files = {label: make_team(root, *shape) for label, shape in CONTENDERS.items()}
        times: dict[str, list[float]] = {label: [] for label in CONTENDERS}
        # Warm-up: the children write their byte code, as installing a package does.
        await one_turn(files["one task alone (baseline)"], 1, root / "home", project)
        for index in range(rounds):
            labels = list(CONTENDERS)
            shift = index % len(labels)
            labels = labels[shift:] + labels[:shift]  # rotate the order
            for label in labels:
                tasks = CONTENDERS[label][0]
                times[label].append(await one_turn(files[label], tasks, root / "home", project))
    baseline = statistics.median(times["one task alone (baseline)"])
    print(f"{rounds} rounds; each task: a `hookgate` child whose model takes {TASK_S:g} s\n")
    print("| turn | median | min | max | ÷ one task alone |")
    print("| --- | --- | --- | --- | --- |")
    for label, samples in times.items():
        median = statistics.median(samples)
        print(f"| {label} | {median:.3f} s | {min(samples):.3f} s | {max(samples):.3f} s "
              f"| {median / baseline:.2f} |")  # fmt: skip
    parallel = statistics.median(times["two tasks, max_parallel 2"])
    verdict = "under" if parallel < BOUND_S else "OVER"
    print(f"\ntwo 1 s tasks at once: {parallel:.3f} s, {verdict} the {BOUND_S:g} s bound")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args().rounds))
