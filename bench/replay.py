"""Replaying recorded tool calls: one process hook against one persistent hook.

Writes a Claude Code transcript of N shell calls with their results, then replays it
(`hookgate hooks replay`'s own path, without the printing) under three agent files
that differ only in their preToolCall hook: none (the gate alone, the baseline), the
rm -rf guard as a process started per call, and the same guard as one persistent
process. Both guards are the same Python code; each answers every call.

    .venv/bin/python bench/replay.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from hookgate.hooks import adopt_orphans
from hookgate.policytest.replay.command import replay, summary
from hookgate.policytest.replay.sources import read_source

CALLS = 10_000
#: Calls replayed through each agent file before its timed run: imports, the parse
#: caches and the shell parser are warm for every row, whichever runs first.
WARMUP = 100
#: One in this many recorded calls is an `rm -rf`, which both guards deny.
DENIED_EVERY = 10

PROCESS_GUARD = """\
import json, sys
event = json.load(sys.stdin)
if "rm -rf" in str(event.get("arguments", {}).get("command", "")):
    json.dump({"action": "deny", "reason": "rm -rf is not allowed"}, sys.stdout)
"""
PERSISTENT_GUARD = """\
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    command = str(message["event"].get("arguments", {}).get("command", ""))
    reply = {"action": "deny", "reason": "rm -rf is not allowed"} if "rm -rf" in command else None
    sys.stdout.write(json.dumps({"id": message["id"], "reply": reply}) + "\\n")
    sys.stdout.flush()
"""


def write_transcript(path: Path, calls: int) -> None:
    """A Claude Code transcript: one question, then `calls` Bash calls with results."""
    lines = [
        {"type": "user", "cwd": str(path.parent), "message": {"role": "user", "content": "go"}}
    ]
    for index in range(calls):
        command = f"rm -rf build{index}" if index % DENIED_EVERY == 0 else f"ls dir{index}"
        use = {"type": "tool_use", "id": f"toolu_{index}", "name": "Bash",
               "input": {"command": command}}  # fmt: skip
        result = {"type": "tool_result", "tool_use_id": f"toolu_{index}", "content": "a\nb\n"}
        lines.append({"type": "assistant", "message": {"role": "assistant", "content": [use]}})
        lines.append({"type": "user", "message": {"role": "user", "content": [result]}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def agent_file(folder: Path, name: str, hook: dict[str, object] | None) -> Path:
    path = folder / f"{name}.yaml"
    hooks = {"preToolCall": [hook]} if hook else {}
    path.write_text(json.dumps({
        "model": "scripted:none.yaml", "tools": ["shell"], "sandbox": {"mode": "off"},
        "permissions": {"allow": ["shell"]}, "hooks": hooks,
    }))  # fmt: skip
    return path


def timed(agent: Path, transcript: Path, warmup: Path) -> tuple[float, dict[str, int]]:
    asyncio.run(replay(agent, [read_source(str(warmup))]))
    recording = read_source(str(transcript))
    started = time.perf_counter()
    done = asyncio.run(replay(agent, [recording]))
    return time.perf_counter() - started, summary(done)


def main(calls: int) -> None:
    adopt_orphans()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "guard.py").write_text(PROCESS_GUARD)
        (folder / "persistent_guard.py").write_text(PERSISTENT_GUARD)
        transcript = folder / "transcript.jsonl"
        write_transcript(transcript, calls)
        warmup = folder / "warmup" / "transcript.jsonl"
        warmup.parent.mkdir()
        write_transcript(warmup, WARMUP)
        python = sys.executable
        agents = {
            "no hook (the gate alone)": agent_file(folder, "bare", None),
            "process hook (Python, one process a call)": agent_file(
                folder, "process", {"name": "guard", "command": f"{python} guard.py"}
            ),
            "persistent hook (the same Python, one process)": agent_file(
                folder,
                "persistent",
                {"name": "guard", "command": f"{python} persistent_guard.py", "persistent": True},
            ),
        }
        results = {name: timed(path, transcript, warmup) for name, path in agents.items()}
    print(f"replaying {calls:,} recorded shell calls (1 in {DENIED_EVERY} an rm -rf)\n")
    print("| agent file | seconds | ms a call | calls now denied |")
    print("| --- | ---: | ---: | ---: |")
    for name, (seconds, counts) in results.items():
        print(
            f"| {name} | {seconds:.2f} | {seconds / calls * 1e3:.3f} | {counts['now_denied']:,} |"
        )
    process = results["process hook (Python, one process a call)"][0]
    persistent = results["persistent hook (the same Python, one process)"][0]
    print(f"\npersistent vs process: {process / persistent:.1f}× faster (goal: ≥ 10×)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=CALLS)
    main(parser.parse_args().calls)
