"""One hook call, side by side: hookgate's ways and its peers', as ratios to a floor.

The floor is the least a process hook can cost: `os.posix_spawn` of `/bin/sh -c true`
with the event on a stdin pipe, its stdout captured (read to end of file), `waitpid`;
the environment is built once, as the engine builds each hook's once. Against it, in
the same run, call by call in a rotating order:
- hookgate: one `command: "true"` hook through `HookEngine.run_sync` and `await run`;
- Python: `subprocess.run` (input, captured output), asyncio's `create_subprocess_exec`;
- Node (if `node` is on PATH): `spawnSync` and the async `spawn`, in a Node process of
  their own that times each call itself, asked in turn with the others (Node's
  start-up and the asking not counted);
- persistent hooks: hookgate's `persistent: true` hook, both drivers, against a bare
  JSON-lines ping-pong with the same child program (`examples/persistent_guard.py`):
  the parent writes a line, reads one back.
The OpenAI Agents SDK has no process hooks; its per-tool-call cost next to hookgate's
is in `bench/runtime_turn.py`. Each round gives each contender's median per call;
the table shows the median of the rounds' ratios and their range.

    .venv/bin/python bench/peers.py [--rounds R] [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO

from hookgate.hooks import HookEngine, adopt_orphans, parse_hooks, run_process_sync
from hookgate.hooks.process import guarded
from hookgate.hooks.process.core import PIPE_SIZE
from hookgate.hooks.yamlfile import Where

PAYLOAD = {"tool": "shell", "arguments": {"command": "ls -la", "timeout": 30}}
EVENT = json.dumps({"event": "preToolCall", "session_id": "bench", **PAYLOAD}).encode()
SHELL = ["/bin/sh", "-c", "true"]
ENV = dict(os.environ)  # built once, like each hook's environment in the engine
GUARDED_ENV = guarded(ENV)
F_SETPIPE_SZ = 1031
RESET_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)
CHILD = Path(__file__).resolve().parents[1] / "examples" / "persistent_guard.py"
NODE_SCRIPT = """
const {spawn, spawnSync} = require('child_process');
const readline = require('readline');
const input = process.argv[1];
const opts = {input, stdio: ['pipe', 'pipe', 'pipe']};
function once() {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', 'true']);
    child.stdout.on('data', () => {});
    child.stderr.on('data', () => {});
    child.stdin.on('error', () => {});  // EPIPE: `true` reads nothing
    child.on('close', resolve);
    child.stdin.end(input);
  });
}
// One line in, one call of each kind, their seconds as one JSON line out.
readline.createInterface({input: process.stdin}).on('line', async () => {
  let t = process.hrtime.bigint();
  spawnSync('/bin/sh', ['-c', 'true'], opts);
  const sync = Number(process.hrtime.bigint() - t) / 1e9;
  t = process.hrtime.bigint();
  await once();
  console.log(JSON.stringify({sync, async: Number(process.hrtime.bigint() - t) / 1e9}));
});
"""


def spawn_floor() -> None:
    """posix_spawn with stdin and stdout pipes, the event written, stdout read, waitpid."""
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    pid = os.posix_spawn(SHELL[0], SHELL, ENV, file_actions=[
        (os.POSIX_SPAWN_DUP2, stdin_r, 0), (os.POSIX_SPAWN_DUP2, stdout_w, 1)])  # fmt: skip
    os.close(stdin_r)
    os.close(stdout_w)
    with contextlib.suppress(BrokenPipeError):
        os.write(stdin_w, EVENT)
    os.close(stdin_w)
    while os.read(stdout_r, 65536):
        pass
    os.close(stdout_r)
    os.waitpid(pid, 0)


def spawn_guarded() -> None:
    """The floor plus what the engine's start adds in the kernel: a new session, two
    signals reset, a stderr pipe, a 1 MiB stdout pipe; no Python beyond the calls."""
    pipes = [os.pipe() for _ in range(3)]
    with contextlib.suppress(OSError):
        fcntl.fcntl(pipes[1][0], F_SETPIPE_SZ, PIPE_SIZE)
    pid = os.posix_spawn(SHELL[0], SHELL, ENV, setsid=True, setsigdef=RESET_SIGNALS,
                         file_actions=[(os.POSIX_SPAWN_DUP2, pipes[0][0], 0),
                                       (os.POSIX_SPAWN_DUP2, pipes[1][1], 1),
                                       (os.POSIX_SPAWN_DUP2, pipes[2][1], 2)])  # fmt: skip
    for fd in (pipes[0][0], pipes[1][1], pipes[2][1]):
        os.close(fd)
    with contextlib.suppress(BrokenPipeError):
        os.write(pipes[0][1], EVENT)
    os.close(pipes[0][1])
    for read_end in (pipes[1][0], pipes[2][0]):
        while os.read(read_end, 65536):
            pass
        os.close(read_end)
    os.waitpid(pid, 0)


def process_layer() -> None:
    """`run_process_sync` alone: every process guarantee, no hook engine around it."""
    run_process_sync(SHELL, stdin=EVENT, env=GUARDED_ENV, timeout=10)


def subprocess_run() -> None:
    subprocess.run(SHELL, input=EVENT, capture_output=True, env=ENV, check=False)


async def asyncio_subprocess() -> None:
    child = await asyncio.create_subprocess_exec(
        *SHELL, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    await child.communicate(EVENT)


class PingPong:
    """The bare JSON-lines exchange with the persistent child: the event encoded and
    written as a line, a line read back and decoded (its id checked)."""

    def __init__(self) -> None:
        self.child = subprocess.Popen([sys.executable, str(CHILD)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=ENV)  # fmt: skip
        assert self.child.stdin is not None
        assert self.child.stdout is not None
        self.stdin: IO[bytes] = self.child.stdin
        self.stdout: IO[bytes] = self.child.stdout
        self.number = 0

    def __call__(self) -> None:
        self.number += 1
        event = json.dumps({"event": "preToolCall", "session_id": "bench", **PAYLOAD})
        self.stdin.write(b'{"id":%d,"event":%s}\n' % (self.number, event.encode()))
        self.stdin.flush()
        assert json.loads(self.stdout.readline())["id"] == self.number

    def close(self) -> None:
        self.stdin.close()
        self.child.wait()


def engine(hook: dict[str, object]) -> HookEngine:
    config = parse_hooks({"preToolCall": [hook]}, Where("bench"), base_dir=Path.cwd())
    return HookEngine(config, session_id="bench")


class Node:
    """A Node process that spawns on request, timing itself: its start-up is not counted."""

    def __init__(self) -> None:
        node = shutil.which("node")
        self.child = None if node is None else subprocess.Popen(
            [node, "-e", NODE_SCRIPT, EVENT.decode()], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip

    def call(self) -> dict[str, float]:
        """One `spawnSync` and one awaited `spawn`: seconds each."""
        assert self.child is not None
        assert self.child.stdin is not None
        assert self.child.stdout is not None
        self.child.stdin.write("go\n")
        self.child.stdin.flush()
        result: dict[str, float] = json.loads(self.child.stdout.readline())
        return result

    def close(self) -> None:
        if self.child is not None and self.child.stdin is not None:
            self.child.stdin.close()
            self.child.wait()


def measure(rounds: int, calls: int) -> list[dict[str, float]]:
    """Each round: every contender's median seconds per call, `calls` calls each."""
    one_hook = engine({"command": "true"})
    resident = {"args": [sys.executable, str(CHILD)], "persistent": True}
    persistent_sync, persistent_async = engine(resident), engine(resident)
    ping_pong, node = PingPong(), Node()
    try:
        return asyncio.run(_rounds(rounds, calls, one_hook, persistent_sync, persistent_async,
                                   ping_pong, node))  # fmt: skip
    finally:
        persistent_sync.close()
        ping_pong.close()
        node.close()


async def _rounds(
    rounds: int, calls: int, one_hook: HookEngine, persistent_sync: HookEngine,
    persistent_async: HookEngine, ping_pong: PingPong, node: Node,
) -> list[dict[str, float]]:  # fmt: skip
    """The rounds, on one running event loop, as an agent's runtime has (the blocking
    contenders block it while they run: nothing else runs here)."""

    def blocking(function: Callable[[], object]) -> Callable[[], Awaitable[object]]:
        async def call() -> object:
            return function()

        return call

    contenders: dict[str, Callable[[], Awaitable[object]]] = {
        "floor": blocking(spawn_floor),
        "spawn guarded": blocking(spawn_guarded),
        "process layer": blocking(process_layer),
        "run_sync": blocking(lambda: one_hook.run_sync("preToolCall", PAYLOAD)),
        "await run": lambda: one_hook.run("preToolCall", PAYLOAD),
        "subprocess.run": blocking(subprocess_run),
        "asyncio subprocess": asyncio_subprocess,
        "ping-pong": blocking(ping_pong),
        "persistent run_sync": blocking(lambda: persistent_sync.run_sync("preToolCall", PAYLOAD)),
        "persistent await run": lambda: persistent_async.run("preToolCall", PAYLOAD),
    }
    names = list(contenders) + (["node"] if node.child is not None else [])
    results = []
    try:
        for name in contenders:  # warm up: imports, the guardian, the persistent children
            await contenders[name]()
        for index in range(rounds):
            samples: dict[str, list[float]] = defaultdict(list)
            for call in range(calls):
                shift = (index + call) % len(names)
                for name in names[shift:] + names[:shift]:
                    if name == "node":  # Node times itself, call by call, in turn too
                        timed = node.call()
                        samples["node spawnSync"].append(timed["sync"])
                        samples["node spawn"].append(timed["async"])
                        continue
                    started = time.perf_counter()
                    await contenders[name]()
                    samples[name].append(time.perf_counter() - started)
            results.append({name: statistics.median(times) for name, times in samples.items()})
    finally:
        await persistent_async.aclose()
        await one_hook.aclose()
    return results


ROWS = (
    ("floor", "floor: `posix_spawn`, stdin and stdout pipes, `waitpid` (baseline)", "1.00×"),
    ("spawn guarded", "the floor + new session, signals reset, stderr pipe, 1 MiB stdout", ""),
    ("process layer", "hookgate `run_process_sync` alone (no engine)", ""),
    ("run_sync", 'hookgate `HookEngine.run_sync`, one `command: "true"` hook', ""),
    ("await run", "hookgate `await HookEngine.run`, the same hook", "≤ 1.2×"),
    ("subprocess.run", "Python `subprocess.run` (input, captured output)", ""),
    ("asyncio subprocess", "Python asyncio `create_subprocess_exec` + `communicate`", ""),
    ("node spawnSync", "Node `child_process.spawnSync` (input, captured output)", ""),
    ("node spawn", "Node `child_process.spawn`, awaited (input, output read)", ""),
    ("ping-pong", "bare JSON-lines ping-pong with the Python child", ""),
    ("persistent run_sync", "hookgate persistent hook, `run_sync`, same child", "≤ 0.1×"),
    ("persistent await run", "hookgate persistent hook, `await run`, same child", "≤ 0.1×"),
)


def report(results: list[dict[str, float]]) -> str:
    def ratios(name: str, base: str) -> list[float]:
        return sorted(r[name] / r[base] for r in results if name in r)

    lines = [
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f}; "
        f"{len(results)} rounds",
        "",
        "| what | per call (median of rounds) | vs floor (median, range) | target |",
        "| --- | ---: | ---: | --- |",
    ]
    for name, label, target in ROWS:
        values = [r[name] for r in results if name in r]
        if not values:
            lines.append(f"| {label} | skipped (not installed) | | |")
            continue
        found = ratios(name, "floor")
        shown = f"{statistics.median(found):.2f}× ({found[0]:.2f}–{found[-1]:.2f})"
        lines.append(
            f"| {label} | {statistics.median(values) * 1e6:,.0f} µs | {shown} | {target} |"
        )
    lines.append("")
    for name in ("persistent run_sync", "persistent await run"):
        found = ratios(name, "ping-pong")
        lines.append(f"- {name} vs the bare ping-pong: {statistics.median(found):.2f}× "
                     f"({found[0]:.2f}–{found[-1]:.2f}); target ≤ 1.3×")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200, help="calls per contender a round")
    args = parser.parse_args()
    adopt_orphans()
    print(report(measure(args.rounds, args.calls)))


if __name__ == "__main__":
    main()
