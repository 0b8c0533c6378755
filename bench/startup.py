"""What hookgate's start-up costs, as ratios to `python -c pass` measured in the same run.

Each round runs, in a rotating order, each as a child process of this one:
- `python -c pass` (the baseline: the interpreter alone);
- `hookgate hooks fire preToolCall` with one `command: "true"` hook;
- `hookgate -p hi` with a scripted model (one text reply);
- `import acp, acp.schema` in a bare interpreter (what the ACP SDK costs by itself),
  timed like `hookgate acp`: to a line it writes once imported, then to its exit at the
  end of its stdin, which skips the interpreter's last collections as `hookgate` does;
- `hookgate acp`, timed to its answer to `initialize` (then its stdin is closed).
A scratch project (agent file trusted, `$HOOKGATE_HOME` of its own) is made once.
Prints a Markdown table of medians, ratios and their spread over the rounds, in wall
clock and in CPU time of the child. `--baseline-src DIR` runs the three hookgate
commands a second time on another source tree (`PYTHONPATH=DIR`), in the same rounds:
before and after a change.

`--instructions` counts instead the instructions each command's own process runs
(valgrind's cachegrind, user space only: not the kernel's work, not the hook's child
processes), `hookgate hook claude`'s for one event of Claude Code's, `python -c pass`'s too, once each: a count the load does not move, which
another run on the same machine and Python reproduces within a few tenths of a percent.

    .venv/bin/python bench/startup.py [--rounds N] [--baseline-src ../main/src]
    .venv/bin/python bench/startup.py --instructions [--baseline-src ../main/src]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PYTHON = sys.executable
#: The `hookgate` command as pip's console script runs it, on whichever source tree is
#: imported: its entry point (`hookgate.program`'s, else `hookgate.cli`'s), or `main` for
#: a tree from before either existed.
HOOKGATE = [
    PYTHON, "-c",
    "import re, sys\n"
    "try:\n"
    "    from hookgate.program import entry\n"
    "except ImportError:\n"
    "    from hookgate import cli\n"
    "    entry = getattr(cli, 'entry', cli.main)\n"
    "sys.exit(entry())",
]  # fmt: skip
INITIALIZE = json.dumps(
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
)
#: The ACP SDK alone, measured as `hookgate acp` is: an answer once imported, then the end
#: of stdin awaited and the exit's full collections skipped, as the `hookgate` program does.
ACP_ALONE = [
    PYTHON, "-c",
    "import gc, sys, acp, acp.schema\n"
    "print('{\"id\": 0, \"result\": {}}', flush=True)\n"
    "sys.stdin.read()\n"
    "gc.freeze()",
]  # fmt: skip
ACP_ALONE_NAME = "import acp, acp.schema (answering once imported)"


def make_project(root: Path) -> dict[str, str]:
    """A trusted agent file with one process hook and a scripted model; its environment."""
    (root / "replies.yaml").write_text("- text: hello\n" * 1)
    (root / "hookgate.yaml").write_text(
        "model: scripted:replies.yaml\nhooks:\n  preToolCall:\n    - command: 'true'\n"
    )
    env = {**os.environ, "HOOKGATE_HOME": str(root / "home"), "NO_COLOR": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
    subprocess.run([*HOOKGATE, "trust", "--yes"], cwd=root, env=env, check=True,
                   capture_output=True)  # fmt: skip
    return env


#: A measurement: (wall-clock seconds, CPU seconds of the child, user + system).
Sample = tuple[float, float]


def timed_run(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes = b"") -> Sample:
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    assert child.stdin is not None
    child.stdin.write(stdin)
    child.stdin.close()
    return _reaped(child, started)


def acp_initialize(argv: list[str], cwd: Path, env: dict[str, str]) -> Sample:
    """Seconds from starting `argv` (`hookgate acp`) to its answer to `initialize`; its
    CPU time to its exit once stdin is closed after that answer."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    assert child.stdin is not None
    assert child.stdout is not None
    child.stdin.write(INITIALIZE.encode() + b"\n")
    child.stdin.flush()
    answer = json.loads(child.stdout.readline())
    elapsed = time.perf_counter() - started
    assert answer.get("id") == 0, answer
    assert "result" in answer, answer
    child.stdin.close()
    return elapsed, _reaped(child, started)[1]


def _reaped(child: subprocess.Popen[bytes], started: float) -> Sample:
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.returncode == 0, child.args
    return elapsed, usage.ru_utime + usage.ru_stime


def contenders(
    root: Path, env: dict[str, str], baseline: Path | None
) -> dict[str, Callable[[], Sample]]:
    runs: dict[str, Callable[[], Sample]] = {
        "python -c pass": lambda: timed_run([PYTHON, "-c", "pass"], root, env),
        ACP_ALONE_NAME: lambda: acp_initialize(ACP_ALONE, root, env),
    }
    versions = {"": env}
    if baseline is not None:  # the same commands on another source tree, e.g. main's
        versions[" [baseline]"] = {**env, "PYTHONPATH": str(baseline)}
    for suffix, used in versions.items():
        runs |= hookgate_commands(root, used, suffix)
    return runs


def hookgate_commands(
    root: Path, env: dict[str, str], suffix: str
) -> dict[str, Callable[[], Sample]]:
    fire = [*HOOKGATE, "hooks", "fire", "preToolCall", "--tool", "shell"]
    return {
        f"hooks fire (one command hook){suffix}": lambda: timed_run(fire, root, env, b"{}"),
        f"-p hi (scripted model){suffix}": lambda: timed_run([*HOOKGATE, "-p", "hi"], root, env),
        f"acp, to its answer to initialize{suffix}": lambda: acp_initialize(
            [*HOOKGATE, "acp"], root, env
        ),
    }


def instructions(root: Path, env: dict[str, str], baseline: Path | None) -> None:
    """Print the instructions (user space, the command's own process) of `python -c
    pass`, `hooks fire` and `-p`, each run once warm, as a table of ratios."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    commands = {"python -c pass": ([PYTHON, "-c", "pass"], env, b"")}
    versions = (
        {"": env}
        if baseline is None
        else {"": env, " [baseline]": {**env, "PYTHONPATH": str(baseline)}}
    )
    for suffix, used in versions.items():
        commands[f"hooks fire (one command hook){suffix}"] = (
            [*HOOKGATE, "hooks", "fire", "preToolCall", "--tool", "shell"],
            used,
            b"{}",
        )
        commands[f"-p hi (scripted model){suffix}"] = ([*HOOKGATE, "-p", "hi"], used, b"")
        commands[f"hook claude (a PreToolUse event){suffix}"] = (
            [*HOOKGATE, "hook", "claude"],
            used,
            _claude_event(root),
        )
    counted = {
        name: _instructions(argv, root, used, stdin)
        for name, (argv, used, stdin) in commands.items()
    }
    print(
        f"instructions, user space, the command's own process (valgrind {_valgrind_version()}):\n"
    )
    print("| what | instructions | vs `python -c pass` |")
    print("| --- | ---: | ---: |")
    for name, count in counted.items():
        print(f"| {name} | {count / 1e6:.1f} M | {count / counted['python -c pass']:.2f}× |")


def _claude_event(root: Path) -> bytes:
    """A PreToolUse event as Claude Code sends it to `hookgate hook claude`."""
    event = {"session_id": "bench", "transcript_path": str(root / "transcript.jsonl"),
             "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": {"command": "ls"}, "tool_use_id": "t1"}  # fmt: skip
    return json.dumps(event).encode()


def _instructions(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes) -> int:
    fixed = {**env, "PYTHONHASHSEED": "0"}  # the same sets and dicts, run after run
    subprocess.run(argv, cwd=cwd, env=fixed, input=stdin, capture_output=True, check=True)
    done = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *argv],
        cwd=cwd, env=fixed, input=stdin, capture_output=True, check=True,
    )  # fmt: skip
    for line in done.stderr.decode().splitlines():
        if "I refs:" in line or "I   refs:" in line:
            return int(line.rsplit(":", 1)[1].replace(",", ""))
    raise RuntimeError(f"no instruction count from valgrind: {done.stderr.decode()[-500:]}")


def _valgrind_version() -> str:
    return subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--baseline-src", type=Path, metavar="DIR",
                        help="also run the hookgate commands on this source tree (PYTHONPATH)")  # fmt: skip
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions (valgrind) instead of timing")  # fmt: skip
    args = parser.parse_args()
    rounds = args.rounds
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        env = make_project(root)
        if args.instructions:
            instructions(root, env, args.baseline_src)
            return
        runs = contenders(root, env, args.baseline_src)
        for run in runs.values():  # warm the byte-code caches and the page cache
            run()
        times: dict[str, list[Sample]] = {name: [] for name in runs}
        names = list(runs)
        for index in range(rounds):
            order = names[index % len(names) :] + names[: index % len(names)]
            for name in order:
                times[name].append(runs[name]())
    report(times, rounds)


def report(times: dict[str, list[Sample]], rounds: int) -> None:
    print(f"rounds: {rounds}; load average: {os.getloadavg()[0]:.2f}")
    for label, which in (("wall clock", 0), ("CPU time of the child (user + system)", 1)):
        print(f"\n{label}:\n")
        print("| what | median | vs `python -c pass` (median of the rounds' ratios, p10–p90) |")
        print("| --- | ---: | ---: |")
        base = [sample[which] for sample in times["python -c pass"]]
        for name, samples in times.items():
            values = [sample[which] for sample in samples]
            ratios = sorted(v / b for v, b in zip(values, base, strict=True))
            spread = f"{_pct(ratios, 10):.2f}–{_pct(ratios, 90):.2f}"
            print(f"| {name} | {statistics.median(values) * 1000:.1f} ms | "
                  f"{statistics.median(ratios):.2f}× ({spread}) |")  # fmt: skip
        if ACP_ALONE_NAME not in times:  # a benchmark that reuses this table (agent_hook)
            continue
        acp_import = [sample[which] for sample in times[ACP_ALONE_NAME]]
        for name in [name for name in times if name.startswith("acp, ")]:
            acp = [sample[which] for sample in times[name]]
            own = sorted(a - i for a, i in zip(acp, acp_import, strict=True))
            print(f"\nhookgate's own part of `{name}` (minus `import acp` in the same "
                  f"round): median {statistics.median(own) * 1000:.1f} ms "
                  f"(p10–p90 {_pct(own, 10) * 1000:.1f}–{_pct(own, 90) * 1000:.1f} ms)")  # fmt: skip


def _pct(values: list[float], percent: int) -> float:
    return values[min(len(values) - 1, len(values) * percent // 100)]


if __name__ == "__main__":
    main()
