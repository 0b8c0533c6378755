"""What the trust check adds to `hookgate -p` start-up, against the same start-up
without it, interleaved run by run in one process.

A project like a real one: an agent file with a scripted model and N `preToolCall`
hooks (20 by default; not fired by a text answer, so only start-up is timed), each
running a script of its own, written as hooks are (`./hooks/x.sh`, `bash hooks/x`,
`python3 hooks/x.py`, `cd hooks && ./x.sh`, `"$CLAUDE_PROJECT_DIR"/hooks/x.sh`).
Two measurements:
- `hookgate -p hi` end to end, as a child process: with the check (the product as
  shipped) and the baseline, the same command in a child where `hookgate.security.trust.check`
  and `hookgate.security.trust.store` are stand-ins that read the agent file and check nothing
  (so neither their imports nor the check are paid; bench-only: there is no switch);
  both with byte code cached, as an installed package has it;
- in this process: importing the check's modules (byte code cached), `require_trust`
  alone, `load_agent_file` for scale, and what a session pays at each hook's first
  run: resolving what it runs (`what_hook_runs`, the bash parser loaded) and checking
  its pins.
Prints a Markdown table.

    .venv/bin/python bench/trust_check.py [--runs N] [--hooks N]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hookgate.config.agentfile import load_agent_file
from hookgate.hooks.runs.pins import SessionPins
from hookgate.security.trust.check import require_trust
from hookgate.security.trust.record import trust_agent_file
from hookgate.security.trust.store import TrustStore

CHECKED = "import sys; from hookgate.cli import main; sys.exit(main())"
#: The baseline: the same CLI, the trust modules replaced before anything imports them.
UNCHECKED = """
import sys, types

class Unchecked:
    def pins(self): return None
    def protected_files(self, store): return frozenset()

def load_trusted(path, *, store, expect_digest):
    from hookgate.config.agentfile import load_agent_file
    return load_agent_file(path), Unchecked()

check = types.ModuleType("hookgate.security.trust.check")
check.load_trusted, check.asked_digests = load_trusted, lambda config, store: {}
store = types.ModuleType("hookgate.security.trust.store")
store.TrustStore = lambda home=None: None
sys.modules.update({"hookgate.security.trust.check": check, "hookgate.security.trust.store": store})
from hookgate.cli import main
sys.exit(main())
"""


#: How hooks name their scripts, in turn: `{}` is the script's name without suffix.
COMMANDS = (
    "./hooks/{}.sh",
    "bash hooks/{}.sh",
    "python3 hooks/{}.py",
    "cd hooks && ./{}.sh",
    '"$CLAUDE_PROJECT_DIR"/hooks/{}.sh',
)


def make_project(root: Path, count: int) -> Path:
    (root / "script.yaml").write_text(json.dumps([{"text": "hello"}]))
    (root / "hooks").mkdir()
    hooks = []
    for index in range(count):
        command = COMMANDS[index % len(COMMANDS)]
        name = f"hook{index}"
        suffix = ".py" if "python3" in command else ".sh"
        script = root / "hooks" / f"{name}{suffix}"
        script.write_text("#!/bin/sh\n" + "# a hook script of ordinary size\n" * 40)
        script.chmod(0o755)
        hooks.append({"command": command.format(name)})
    agent = root / "hookgate.yaml"
    agent.write_text(json.dumps({"model": "scripted:script.yaml", "hooks": {"preToolCall": hooks}}))
    return agent


def time_child(code: str, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """The child's wall time and its CPU time (user + system, its children's too): the
    CPU time hardly moves with a neighbour's load, the wall time does."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, "-p", "hi"], cwd=cwd, env=env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu


def time_in_process(function: object, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        function()  # type: ignore[operator]
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def import_check_modules() -> None:
    """Import `hookgate.security.trust.check` (and the store) afresh, as a start-up does."""
    for name in [name for name in sys.modules if name.startswith("hookgate.security.trust.")]:
        del sys.modules[name]
    importlib.import_module("hookgate.security.trust.check")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="runs of each command")
    parser.add_argument("--hooks", type=int, default=20, help="hooks in the agent file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        agent = make_project(root, args.hooks)
        home = root / "home"
        store = TrustStore(home)
        trust_agent_file(agent, store=store)
        env = {**os.environ, "HOOKGATE_HOME": str(home), "NO_COLOR": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc
        time_child(CHECKED, root, env)  # writes the byte code of both runs' modules
        checked: list[tuple[float, float]] = []
        unchecked: list[tuple[float, float]] = []
        for run in range(args.runs):  # interleaved, the order alternating
            pair = [(checked, CHECKED), (unchecked, UNCHECKED)]
            for samples, code in pair if run % 2 else reversed(pair):
                samples.append(time_child(code, root, env))
        check = time_in_process(lambda: require_trust(agent, store=store), 2000)
        sys.dont_write_bytecode = False
        import_check_modules()  # writes their byte code
        imports = time_in_process(import_check_modules, 200)
        load = time_in_process(lambda: load_agent_file(agent, import_hooks=False), 200)
        config = load_agent_file(agent, import_hooks=False)
        digests = {path: f.sha256 for path, f in store.entries()[str(agent)].files.items()}

        def first_runs() -> None:
            pins = SessionPins(digests, config.base_dir)
            assert all(pins.changed(hook) is None for hook in config.hooks)

        first = time_in_process(first_runs, 200)
    base, with_check = (statistics.median(w for w, _ in runs) for runs in (unchecked, checked))
    base_cpu, check_cpu = (statistics.median(c for _, c in runs) for runs in (unchecked, checked))
    print(f"| what | median of {args.runs} | vs baseline |")
    print("| --- | ---: | ---: |")
    print(f"| `hookgate -p hi`, no trust check (baseline), CPU | {base_cpu * 1e3:.1f} ms | |")
    print(f"| `hookgate -p hi`, with the trust check, CPU | {check_cpu * 1e3:.1f} ms "
          f"| {(check_cpu - base_cpu) * 1e3:+.1f} ms |")  # fmt: skip
    print(f"| `hookgate -p hi`, no trust check (baseline) | {base * 1e3:.1f} ms | |")
    print(f"| `hookgate -p hi`, with the trust check | {with_check * 1e3:.1f} ms "
          f"| {(with_check - base) * 1e3:+.1f} ms |")  # fmt: skip
    print(f"| in process: importing the check's modules | {imports * 1e3:.3f} ms | |")
    print(f"| in process: `require_trust` (agent file + {args.hooks} hook scripts) "
          f"| {check * 1e3:.3f} ms | |")  # fmt: skip
    print(f"| in process: `load_agent_file`, for scale | {load * 1e3:.3f} ms | |")
    print(f"| in process: every hook's first run: what it runs, and its pins "
          f"| {first * 1e3:.3f} ms | |")  # fmt: skip


if __name__ == "__main__":
    main()
