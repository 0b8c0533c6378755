"""What judging a shell call costs now that rules see each command, in one run.

Baseline, measured here interleaved call by call with the new judge on the same lines:
the old judge, one `fnmatch` of each rule against the whole command line (what
`Policy.judge` did before it parsed). Then `Policy.judge` as it is: the line parsed
with tree-sitter's bash grammar, each rule matched against each command. Both use the
starter file's rules plus a deny rule; the lines are typical model calls, short and
long. Prints a Markdown table of medians and the ratio to the baseline.

    .venv/bin/python bench/shell_rules.py [--rounds N]
"""

from __future__ import annotations

import argparse
import fnmatch
import statistics
import time
from collections.abc import Callable

from hookgate.policy import Policy, Verdict
from hookgate.shellwords import parse_command_line

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


def per_call(judge: Callable[[str], Verdict], line: str) -> float:
    start = time.perf_counter()
    for _ in range(BATCH):
        judge(line)
    return (time.perf_counter() - start) / BATCH


def measure(line: str, rounds: int) -> tuple[float, float, float]:
    """Medians of the old judge, the new judge and the parse alone, interleaved."""
    old: list[float] = []
    new: list[float] = []
    parse: list[float] = []
    for index in range(rounds):
        order = [(old_judge, old), (new_judge, new), (parse_command_line, parse)]
        for judge, samples in order[index % 3 :] + order[: index % 3]:
            samples.append(per_call(judge, line))  # type: ignore[arg-type]
    return statistics.median(old), statistics.median(new), statistics.median(parse)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    rounds = parser.parse_args().rounds
    print(f"{rounds} rounds of {BATCH} calls per line; medians per call\n")
    print(
        "| line | old: fnmatch on the line (baseline) | new: `Policy.judge` | of which parsing | new − old |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, line in LINES.items():
        old, new, parse = measure(line, rounds)
        print(f"| {label} | {old * 1e6:.2f} µs | {new * 1e6:.1f} µs | {parse * 1e6:.1f} µs "
              f"| +{(new - old) * 1e6:.1f} µs ({new / old:.0f}×) |")  # fmt: skip


if __name__ == "__main__":
    main()
