"""What one event of another agent costs through `hookgate hook AGENT`, as ratios to
`python -c pass` and to the same guard run as a bare shell script, in the same run.

Each round runs, in a rotating order, each as a child process of this one:
- `python -c pass` (the baseline: the interpreter alone);
- the example rm -rf guard as a bare script (`sh guard-rm-rf.sh`), fed hookgate's event
  for `ls`: what an agent pays to run the guard as its own hook, without hookgate;
- `hookgate hook claude` on Claude Code's PreToolUse for `ls`: trust check, the guard
  run under the engine, the answer, the audit trail's lines;
- the same on a PreToolUse no hook matches (`Read`): hookgate's own part alone;
- `hookgate hooks fire preToolCall` on the same call, for comparison;
- `python -S .../relay.py claude` on both events, the resident hookgate up
  (what `hookgate install claude --resident` runs).
The scratch project holds a hooks-only `hookgate.yaml` (the guard, `onError: fail`),
trusted. Prints `bench/startup.py`'s tables: wall clock and CPU time of the child.

    .venv/bin/python bench/agent_hook.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import tempfile
import time
from importlib import resources
from pathlib import Path

from startup import HOOKGATE, PYTHON, Sample, report, timed_run

from hookgate.agents import relay

#: What `hookgate install claude --resident` writes.
RELAY = [PYTHON, "-S", relay.__file__, "claude"]


def make_project(root: Path) -> dict[str, str]:
    """The guard, a hooks-only agent file naming it, trusted; the environment to run in."""
    guard = root / "guard-rm-rf.sh"
    guard.write_bytes(resources.files("hookgate.examples").joinpath(guard.name).read_bytes())
    guard.chmod(0o755)
    hook = {"matcher": "^shell$", "command": "./guard-rm-rf.sh", "onError": "fail"}
    (root / "hookgate.yaml").write_text(json.dumps({"hooks": {"preToolCall": [hook]}}))
    env = {**os.environ, "HOOKGATE_HOME": str(root / "home"), "NO_COLOR": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
    subprocess.run([*HOOKGATE, "trust", "--yes"], cwd=root, env=env, check=True,
                   capture_output=True)  # fmt: skip
    return env


def claude_event(root: Path, tool: str, tool_input: dict[str, str]) -> bytes:
    return json.dumps({
        "session_id": "bench", "cwd": str(root), "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": tool, "tool_input": tool_input,
        "tool_use_id": "toolu_1",
    }).encode()  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        env = make_project(root)
        bash = claude_event(root, "Bash", {"command": "ls"})
        read = claude_event(root, "Read", {"file_path": str(root / "hookgate.yaml")})
        native = json.dumps({"event": "preToolCall", "tool": "shell",
                             "arguments": {"command": "ls"}}).encode()  # fmt: skip
        fire = [*HOOKGATE, "hooks", "fire", "preToolCall", "--tool", "shell"]
        runs = {
            "python -c pass": lambda: timed_run([PYTHON, "-c", "pass"], root, env),
            "the guard alone (sh guard-rm-rf.sh)": lambda: timed_run(
                ["sh", "./guard-rm-rf.sh"], root, env, native
            ),
            "hook claude, PreToolUse Bash (the guard runs)": lambda: timed_run(
                [*HOOKGATE, "hook", "claude"], root, env, bash
            ),
            "hook claude, PreToolUse Read (no hook matches)": lambda: timed_run(
                [*HOOKGATE, "hook", "claude"], root, env, read
            ),
            "hooks fire preToolCall (the guard runs)": lambda: timed_run(
                fire, root, env, b'{"command": "ls"}'
            ),
            "relay to the resident, PreToolUse Bash (the guard runs)": lambda: timed_run(
                RELAY, root, env, bash
            ),
            "relay to the resident, PreToolUse Read (no hook matches)": lambda: timed_run(
                RELAY, root, env, read
            ),
        }
        for run in runs.values():  # warm the byte-code caches, the parse cache, the audit file
            run()
        resident = wait_for_resident(root / "home")
        times: dict[str, list[Sample]] = {name: [] for name in runs}
        names = list(runs)
        for index in range(rounds):
            for name in names[index % len(names) :] + names[: index % len(names)]:
                times[name].append(runs[name]())
        os.kill(resident, signal.SIGTERM)
    report(times, rounds)


def wait_for_resident(home: Path) -> int:
    """The pid of the resident the relay's first run started, once it listens."""
    while not (home / "resident" / "hookgate.sock").exists():
        time.sleep(0.05)
    return int((home / "resident" / "lock").read_text())


if __name__ == "__main__":
    main()
