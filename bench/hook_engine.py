"""What the hook engine costs, against the bare cost of starting a process, in one run.

Baselines, measured here in the same run on the same payload:
- bare: `os.posix_spawn` of `/bin/sh -c true`, the payload written to its stdin, `waitpid`;
- `subprocess.run` of the same, with the payload as input;
- Node's `child_process.spawnSync` of the same, where `node` is installed.
- the asyncio floor: the same spawn with three pipes, awaited through a pidfd.
Then the engine: one `command: "true"` hook run through `HookEngine.run` (on the event
loop) and `HookEngine.run_sync` (no loop), an event no hook matches, and a
Python-callable hook; and a hook running a script file, unpinned and pinned (the
digest the trust check gives a session: a `stat` per run). Prints a Markdown table.

    .venv/bin/python bench/hook_engine.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from hookgate.hooks import HookEngine, adopt_orphans, callable_hook, parse_hooks
from hookgate.hooks.files.yamlfile import Where
from hookgate.hooks.runs.pins import file_digest

PAYLOAD = {"tool": "shell", "arguments": {"command": "ls -la", "timeout": 30}}
ENCODED = json.dumps({"event": "preToolCall", "session_id": "bench", **PAYLOAD}).encode()
SHELL = ["/bin/sh", "-c", "true"]
#: The baselines' environment, built once as the engine builds each hook's: copying
#: os.environ on every call would charge the baseline for work the engine does not do.
ENV = dict(os.environ)


def bare_spawn() -> None:
    read_end, write_end = os.pipe()
    pid = os.posix_spawn(SHELL[0], SHELL, ENV, file_actions=[(os.POSIX_SPAWN_DUP2, read_end, 0)])
    os.close(read_end)
    with contextlib.suppress(BrokenPipeError):
        os.write(write_end, ENCODED)
    os.close(write_end)
    os.waitpid(pid, 0)


async def asyncio_floor() -> None:
    """The least an event loop can do: spawn with three pipes, await a pidfd, reap.

    No timeout, no draining, no cleanup: the floor under any asyncio hook runner.
    """
    loop = asyncio.get_running_loop()
    pipes = [os.pipe() for _ in range(3)]
    pid = os.posix_spawn(
        SHELL[0], SHELL, ENV, setsid=True,
        file_actions=[(os.POSIX_SPAWN_DUP2, pipes[0][0], 0),
                      (os.POSIX_SPAWN_DUP2, pipes[1][1], 1),
                      (os.POSIX_SPAWN_DUP2, pipes[2][1], 2)],
    )  # fmt: skip
    for fd in (pipes[0][0], pipes[1][1], pipes[2][1]):
        os.close(fd)
    with contextlib.suppress(BrokenPipeError):
        os.write(pipes[0][1], ENCODED)
    os.close(pipes[0][1])
    pidfd = os.pidfd_open(pid)
    exited = loop.create_future()
    loop.add_reader(pidfd, lambda: exited.done() or exited.set_result(None))
    await exited
    loop.remove_reader(pidfd)
    for fd in (pidfd, pipes[1][0], pipes[2][0]):
        os.close(fd)
    os.waitpid(pid, 0)


def subprocess_run() -> None:
    subprocess.run(SHELL, input=ENCODED, check=False)


NODE_SCRIPT = """
const {spawnSync} = require('child_process');
const n = +process.argv[1], input = process.argv[2];
spawnSync('/bin/sh', ['-c', 'true'], {input});
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) spawnSync('/bin/sh', ['-c', 'true'], {input});
console.log(Number(process.hrtime.bigint() - t0) / n / 1e9);
"""


def node_spawn_sync(rounds: int) -> float | None:
    node = shutil.which("node")
    if node is None:
        return None
    out = subprocess.run(
        [node, "-e", NODE_SCRIPT, str(rounds), ENCODED.decode()],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return float(out.stdout)


async def time_async(function: Callable[[], Awaitable[object]], rounds: int) -> float:
    await function()
    started = time.perf_counter()
    for _ in range(rounds):
        await function()
    return (time.perf_counter() - started) / rounds


def engine_with(
    hooks_yaml: dict[str, object],
    extra: list[object] | None = None,
    pinned: dict[str, str | None] | None = None,
) -> HookEngine:
    config = parse_hooks(hooks_yaml, Where("bench"), base_dir=Path.cwd())
    return HookEngine(config, session_id="bench", extra=extra or [], pinned=pinned)  # type: ignore[arg-type]


def script_engines(directory: Path) -> tuple[HookEngine, HookEngine]:
    """One hook running a `#!/bin/sh` script: as is, and with its digest pinned."""
    script = directory / "hook.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    hooks: dict[str, object] = {"preToolCall": [{"args": [str(script)]}]}
    return engine_with(hooks), engine_with(hooks, pinned={str(script): file_digest(script)})


async def measure(rounds: int, fast_rounds: int) -> dict[str, float]:
    """Medians per call; the process-starting methods take turns call by call, so that
    drift (a busy neighbour, CPU frequency) hits each of them alike."""
    one_hook = engine_with({"preToolCall": [{"command": "true"}]})
    no_match = engine_with({"preToolCall": [{"command": "true", "matcher": "^never$"}]})
    no_hooks = engine_with({})
    python = engine_with({}, [callable_hook("preToolCall", lambda event: None)])
    with tempfile.TemporaryDirectory() as directory:
        script, pinned = script_engines(Path(directory))
        return await _measure(
            rounds, fast_rounds, one_hook, no_match, no_hooks, python, script, pinned
        )


async def _measure(
    rounds: int, fast_rounds: int, one_hook: HookEngine, no_match: HookEngine,
    no_hooks: HookEngine, python: HookEngine, script: HookEngine, pinned: HookEngine,
) -> dict[str, float]:  # fmt: skip

    async def bare() -> None:
        bare_spawn()

    async def run_subprocess() -> None:
        subprocess_run()

    async def engine_sync() -> None:
        one_hook.run_sync("preToolCall", PAYLOAD)

    spawning: dict[str, Callable[[], Awaitable[object]]] = {
        "bare": bare,
        "subprocess": run_subprocess,
        "floor": asyncio_floor,
        "engine": lambda: one_hook.run("preToolCall", PAYLOAD),
        "engine_sync": engine_sync,
        "script": lambda: script.run("preToolCall", PAYLOAD),
        "pinned": lambda: pinned.run("preToolCall", PAYLOAD),
    }
    samples: dict[str, list[float]] = {name: [] for name in spawning}
    for _ in range(rounds + 1):
        for name, function in spawning.items():
            started = time.perf_counter()
            await function()
            samples[name].append(time.perf_counter() - started)
    results = {name: statistics.median(times[1:]) for name, times in samples.items()}
    results["no_hooks"] = await time_async(
        lambda: no_hooks.run("preToolCall", PAYLOAD), fast_rounds
    )
    results["no_match"] = await time_async(
        lambda: no_match.run("preToolCall", PAYLOAD), fast_rounds
    )
    results["callable"] = await time_async(lambda: python.run("preToolCall", PAYLOAD), fast_rounds)
    node = node_spawn_sync(rounds)
    if node is not None:
        results["node"] = node
    return results


def report(results: dict[str, float]) -> str:
    bare = results["bare"]
    rows = [
        ("bare `posix_spawn` + stdin + `waitpid` (baseline)", results["bare"], "1.00×", ""),
        ("`subprocess.run` (same command and input)", results["subprocess"], None, ""),
        (
            "asyncio floor: spawn, await a pidfd, reap (no timeout, no draining)",
            results["floor"],
            None,
            "",
        ),
        ("Node `spawnSync` (same command and input)", results.get("node"), None, ""),
        ("hookgate: one `command` hook, `await HookEngine.run`", results["engine"], None, "≤ 1.2×"),
        ("hookgate: the same, `HookEngine.run_sync`", results["engine_sync"], None, "≤ 1.2×"),
        (
            "hookgate: one hook running a script file, `await HookEngine.run`",
            results["script"],
            None,
            "",
        ),
        (
            "hookgate: the same, its script pinned (trusted digest checked)",
            results["pinned"],
            None,
            "",
        ),
        ("hookgate: event with no hooks", results["no_hooks"], "", "< 5 µs"),
        ("hookgate: event whose hooks do not match", results["no_match"], "", "< 5 µs"),
        ("hookgate: one Python-callable hook", results["callable"], "", "< 50 µs"),
    ]
    lines = ["| what | per call (median) | vs bare | target |", "| --- | ---: | ---: | --- |"]
    for label, seconds, ratio, target in rows:
        if seconds is None:
            continue
        shown = f"{seconds * 1e3:.3f} ms" if seconds > 1e-4 else f"{seconds * 1e6:.2f} µs"
        ratio = ratio if ratio is not None else f"{seconds / bare:.2f}×"
        lines.append(f"| {label} | {shown} | {ratio} | {target} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=500, help="process starts per measurement")
    parser.add_argument("--fast-rounds", type=int, default=20000, help="rounds without a process")
    args = parser.parse_args()
    adopt_orphans()
    print(report(asyncio.run(measure(args.rounds, args.fast_rounds))))


if __name__ == "__main__":
    main()
