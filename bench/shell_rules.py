"""What judging a shell call costs now that rules see each command, in one run.

Baseline, measured here interleaved call by call with the new judge on the same lines:
the old judge, one `fnmatch` of each rule against the whole command line (what
`Policy.judge` did before it parsed). Then `Policy.judge` as it is: the line parsed
with tree-sitter's bash grammar, each rule matched against each command. Both use the
rules of a cautious agent file; the lines are typical model calls, short and
long. Prints a Markdown table of medians and the ratio to the baseline.

    .venv/bin/python bench/shell_rules.py [--rounds N]
"""

from __future__ import annotations

import argparse
import fnmatch
import statistics
import time
from collections.abc import Callable

from hookgate.hooks.shell.words import parse_command_line
from hookgate.security.policy import Policy, Verdict

ALLOW = ("shell(git status)", "shell(ls)", "shell(ls *)")
DENY = ("shell(sudo *)", "shell(rm *)")
LINES = {
    "short (`ls -la`)": "ls -la",
    "a list (`git status; ls && cat x \\| wc -l`)": "git status; ls && cat x | wc -l",
    "substitutions and `bash -c`": "echo $(date) `id`; bash -c 'ls; cat README.md' > out",
    "long (2 KB, 40 commands)": "; ".join(f"grep -n 'pattern {i}' src/file{i}.py" for i in range(40)),
}  # fmt: skip
#: Calls per timed batch: one batch is short enough that a neighbour rarely lands in it.
BATCH = 50


def old_judge(line: str) -> Verdict:
    """The judge before this change: each rule's glob on the whole line."""
    for rule in DENY:
        if fnmatch.fnmatchcase(line, rule[len("shell(") : -1]):
            return Verdict.DENY
    for rule in ALLOW:
        if fnmatch.fnmatchcase(line, rule[len("shell(") : -1]):
            return Verdict.ALLOW
    return Verdict.ASK


def new_judge(line: str) -> Verdict:
    return POLICY.judge("shell", {"command": line}, needs_consent=True).verdict


POLICY = Policy(allow=ALLOW, deny=DENY)


def per_call(judge: Callable[[str], object], line: str) -> tuple[float, float]:
    """CPU seconds (this thread's: waiting for a busy core is not counted) and wall seconds."""
    cpu, wall = time.thread_time(), time.perf_counter()
    for _ in range(BATCH):
        judge(line)
    return (time.thread_time() - cpu) / BATCH, (time.perf_counter() - wall) / BATCH


def measure(line: str, rounds: int) -> dict[str, tuple[float, float]]:
    """Median CPU and wall time per call of each contender, interleaved batch by batch."""
    contenders: dict[str, Callable[[str], object]] = {
        "old": old_judge, "new": new_judge, "parse": parse_command_line,
    }  # fmt: skip
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    names = list(contenders)
    for index in range(rounds):
        for name in names[index % 3 :] + names[: index % 3]:
            samples[name].append(per_call(contenders[name], line))
    return {
        name: (statistics.median(c for c, _ in got), statistics.median(w for _, w in got))
        for name, got in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    rounds = parser.parse_args().rounds
    print(
        f"{rounds} rounds of {BATCH} calls per line; median CPU time per call (wall in brackets)\n"
    )
    print(
        "| line | old: fnmatch on the line (baseline) | new: `Policy.judge` | of which parsing | new − old |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, line in LINES.items():
        got = measure(line, rounds)
        (old, old_wall), (new, new_wall), (parse, _) = got["old"], got["new"], got["parse"]
        print(f"| {label} | {old * 1e6:.2f} µs ({old_wall * 1e6:.2f}) | {new * 1e6:.1f} µs "
              f"({new_wall * 1e6:.1f}) | {parse * 1e6:.1f} µs | +{(new - old) * 1e6:.1f} µs "
              f"({new / old:.0f}×) |")  # fmt: skip


if __name__ == "__main__":
    main()
