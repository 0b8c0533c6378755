"""What one more `-c` turn costs on a long session, against the floor of reading its file.

For each size N (turns of about 100 characters each way), a session file of N turns is
written once: compaction off (a budget no session reaches), and with `--compaction` also
compaction on (the default budget, a summary recorded each `COMPACT_EVERY` turns, as
hookgate leaves one); each round copies it back and runs `hookgate -c -p hi` with
a scripted model, as a child process whose CPU time is measured. The floor is one
`json.loads` pass over the file's lines (in this process, CPU time). The goal (issue
32): the turn at 10,000 costs at most the turn at 100 plus 2x that pass. With
`--baseline-src DIR`, the same runs on another source tree (`PYTHONPATH=DIR`), in the
same rounds: before and after a change.

    .venv/bin/python bench/resume.py [--rounds N] [--sizes 100,1000,10000] [--baseline-src DIR]
        [--compaction]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
#: How hookgate writes its session files' JSON.
COMPACT = (",", ":")
HOOKGATE = [PYTHON, "-c", "import sys; from hookgate import cli; sys.exit(cli.main())"]
#: What each question and each answer of the made-up session holds.
TEXT = "x" * 100
#: Turns between two summaries with compaction on: about what the default budget
#: (200,000 characters) holds of these turns.
COMPACT_EVERY = 900
#: Messages a summary keeps as they were (`hookgate.runtime.compaction.KEEP_RECENT`).
KEPT = 6
#: The agent file's `context_budget` for each mode: off is a budget never reached.
BUDGETS = {"off": 10**12, "on": 200_000}


def write_session(home: Path, cwd: Path, agent_file: Path, turns: int, compacted: bool) -> Path:
    """A session file of `turns` turns, as hookgate writes one (header, then records),
    with a summary each `COMPACT_EVERY` turns where `compacted`."""
    sessions = home / "sessions"
    sessions.mkdir(parents=True, exist_ok=True, mode=0o700)
    session_id = f"20260101-000000-{turns:06x}"
    path = sessions / f"{session_id}.jsonl"
    header = {"type": "session", "id": session_id, "created": "2026-01-01T00:00:00.000+00:00",
              "agent_file": str(agent_file), "cwd": str(cwd), "version": 1}  # fmt: skip
    lines = [json.dumps(header, separators=COMPACT)]
    for n in range(turns):
        for role in ("user", "assistant"):
            message = {"role": role, "content": f"{role} {n} {TEXT}"}
            lines.append(json.dumps({"type": "message", "message": message}, separators=COMPACT))
        if compacted and (n + 1) % COMPACT_EVERY == 0:
            data = {"messages_summarised": 2 * (n + 1) - KEPT, "kept": KEPT,
                    "summary": f"summary up to {n} {TEXT}", "summarised": True}  # fmt: skip
            record = {"type": "event", "kind": "compacted", "data": data}
            lines.append(json.dumps(record, separators=COMPACT))
    path.write_text("\n".join(lines) + "\n")
    os.chmod(path, 0o600)
    return path


def loads_pass(data: bytes) -> float:
    """CPU seconds of one `json.loads` of each line of a session file (the floor of
    reading it)."""
    started = time.process_time()
    for line in data.split(b"\n"):
        if line:
            json.loads(line)
    return time.process_time() - started


def child_cpu(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one run of `argv`, which must answer."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise SystemExit(f"{argv} failed: {run.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--baseline-src", type=Path)
    parser.add_argument("--compaction", action="store_true", help="measure compaction on too")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    trees = {"now": str(Path(__file__).parents[1] / "src")}
    if args.baseline_src is not None:
        trees["baseline"] = str(args.baseline_src.resolve())
    modes = ["off", "on"] if args.compaction else ["off"]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        cpu, floor = measure(root, sizes, trees, modes, args.rounds)
    for mode in modes:
        print(f"\nCompaction {mode}.")
        report(sizes, trees, {(t, n): c for (t, m, n), c in cpu.items() if m == mode},
               floor, args.rounds)  # fmt: skip


Runs = dict[tuple[str, str, int], list[float]]


def measure(
    root: Path, sizes: list[int], trees: dict[str, str], modes: list[str], rounds: int
) -> tuple[Runs, dict[int, list[float]]]:
    """CPU seconds of each (tree, mode, size)'s runs, and of each size's floor."""
    home = root / "home"
    env = {**os.environ, "HOOKGATE_HOME": str(home), "NO_COLOR": "1"}
    templates = {}
    for mode in modes:
        project = root / mode
        project.mkdir()
        (project / "script.json").write_text(json.dumps([{"text": "ok"}]))
        agent = project / "hookgate.yaml"
        agent.write_text(json.dumps({"model": "scripted:script.json",
                                     "context_budget": BUDGETS[mode]}))  # fmt: skip
        subprocess.run([*HOOKGATE, "trust", "--yes"], cwd=project, env={**env, "PYTHONPATH": trees["now"]},
                       check=True, capture_output=True)  # fmt: skip
        # Each size as a run of this tree leaves it: the session file and its transcript.
        for n in sizes:
            path = write_session(home, project, agent, n, mode == "on")
            child_cpu([*HOOKGATE, "-c", "-p", "hi"], project, {**env, "PYTHONPATH": trees["now"]})
            transcript = home / "transcripts" / path.name
            templates[mode, n] = (
                project,
                path,
                path.read_bytes(),
                transcript,
                transcript.read_bytes(),
            )
            path.unlink()
    cpu: Runs = {}
    floor: dict[int, list[float]] = {}
    for _ in range(rounds):
        for (mode, n), (project, path, recorded, transcript, transcribed) in templates.items():
            for tree, src in trees.items():
                path.write_bytes(recorded)
                transcript.write_bytes(transcribed)
                cost = child_cpu([*HOOKGATE, "-c", "-p", "hi"], project,
                                 {**env, "PYTHONPATH": src})  # fmt: skip
                cpu.setdefault((tree, mode, n), []).append(cost)
            path.unlink()
            if mode == "off":
                floor.setdefault(n, []).append(loads_pass(recorded))
    return cpu, floor


def report(
    sizes: list[int],
    trees: dict[str, str],
    cpu: dict[tuple[str, int], list[float]],
    floor: dict[int, list[float]],
    rounds: int,
) -> None:
    print(f"One `-c -p hi` turn, CPU ms (median of {rounds}); floor: one json.loads pass\n")
    print("| turns | " + " | ".join(trees) + " | floor | now − now@first | goal: ≤ 2× floor |")
    print("| --- |" + " --- |" * (len(trees) + 3))
    first = statistics.median(cpu[("now", sizes[0])])
    for n in sizes:
        medians = [statistics.median(cpu[(tree, n)]) for tree in trees]
        pass_ms = statistics.median(floor[n])
        extra = medians[0] - first
        cells = " | ".join(f"{m * 1000:.0f}" for m in medians)
        verdict = "yes" if extra <= 2 * pass_ms else "no"
        print(f"| {n:,} | {cells} | {pass_ms * 1000:.1f} | {extra * 1000:+.0f} | {verdict} |")


if __name__ == "__main__":
    main()
