"""One hook call, side by side: hookgate's ways and its peers', as ratios to a floor.

The floor is the least a process hook can cost: `os.posix_spawn` of `/bin/sh -c true`
with the event on a stdin pipe, its stdout captured (read to end of file), `waitpid`;
the environment is built once, as the engine builds each hook's once. Against it, in
the same run, call by call in a shuffled order (seeded: each run shuffles alike; a
fixed order, even rotating, has each contender follow the same one, and an exchange
that follows another was measured up to 25 µs slower than one that follows a spawn):
- hookgate: one `command: "true"` hook through `HookEngine.run_sync` and `await run`,
  and its process layer alone (`run_process_sync`, `await run_process`): the engine's
  share apart;
- the floor on the event loop: the same start, the exit awaited once through the pidfd:
  the least `await run` can cost;
- Python: `subprocess.run` (input, captured output), asyncio's `create_subprocess_exec`;
- Node (if `node` is on PATH): `spawnSync` and the async `spawn`, in a Node process of
  their own that times each call itself, asked in turn with the others (Node's
  start-up and the asking not counted);
- persistent hooks: hookgate's `persistent: true` hook, both drivers, against a bare
  JSON-lines ping-pong with the same child program (`examples/persistent_guard.py`):
  the parent writes the line hookgate writes, reads one back; and the same exchange
  on the event loop, as a minimal asyncio client does it (the child's stdout watched
  once with `add_reader`, a future per line): the floor `await run` can reach.
Then the floor, the ping-pong and both persistent drivers again, in blocks of `--calls`
consecutive calls (the order of the blocks rotating): call by call, every exchange
finds an idle processor to wake; in a block, the child is still warm. A warm exchange
takes about 22 µs where the child runs on the benchmark's own processor and about
70 µs where it runs on another, and the scheduler picks one for each child by chance:
so the blocks of the exchanges are run once more with each child pinned to the
benchmark's processor, and once with each pinned to another (`sched_setaffinity`).
Each block round starts the four persistent children afresh, in a shuffled order: one
start of a program can be 3 µs an exchange faster than the next (`Exchanges`), so that
each ratio in blocks is taken over `--block-rounds` starts of each.
The OpenAI Agents SDK has no process hooks; its per-tool-call cost next to hookgate's
is in `bench/runtime_turn.py`. Each round gives each contender's median per call;
the table shows the median of the rounds' ratios and their range.

    .venv/bin/python bench/peers.py [--rounds R] [--calls N] [--block-rounds B]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from hookgate.hooks import HookEngine, adopt_orphans, parse_hooks, run_process_sync
from hookgate.hooks.files.yamlfile import Where
from hookgate.hooks.process import guarded, run_process

PAYLOAD = {"tool": "shell", "arguments": {"command": "ls -la", "timeout": 30}}
EVENT = json.dumps({"event": "preToolCall", "session_id": "bench", **PAYLOAD}).encode()
SHELL = ["/bin/sh", "-c", "true"]
ENV = dict(os.environ)  # built once, like each hook's environment in the engine
GUARDED_ENV = guarded(ENV)
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


async def loop_floor() -> None:
    """The floor on the event loop, the least a loop can do: the same start, then one
    future, settled when the loop sees the process's pidfd readable (its exit)."""
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    pid = os.posix_spawn(SHELL[0], SHELL, ENV, file_actions=[
        (os.POSIX_SPAWN_DUP2, stdin_r, 0), (os.POSIX_SPAWN_DUP2, stdout_w, 1)])  # fmt: skip
    pidfd = os.pidfd_open(pid)
    os.close(stdin_r)
    os.close(stdout_w)
    with contextlib.suppress(BrokenPipeError):
        os.write(stdin_w, EVENT)
    os.close(stdin_w)
    loop = asyncio.get_running_loop()
    exited = loop.create_future()
    loop.add_reader(pidfd, exited.set_result, None)
    await exited
    loop.remove_reader(pidfd)
    os.close(pidfd)
    while os.read(stdout_r, 65536):  # `true` writes nothing: one read, at end of file
        pass
    os.close(stdout_r)
    os.waitpid(pid, 0)


def spawn_guarded() -> None:
    """The floor plus what the engine's start adds in the kernel: a new session, two
    signals reset, a stderr pipe; no Python beyond the calls. (A hook that once wrote
    more than a pipe holds also gets a 1 MiB stdout pipe: not this one.)"""
    pipes = [os.pipe() for _ in range(3)]
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
    """`run_process_sync` alone: every process guarantee, no hook engine around it; the
    stdout pipe left as the engine leaves a hook's whose replies are short."""
    run_process_sync(SHELL, stdin=EVENT, env=GUARDED_ENV, timeout=10, pipe_size=None)


async def process_layer_awaited() -> None:
    """`await run_process` alone: the same, on the event loop."""
    await run_process(SHELL, stdin=EVENT, env=GUARDED_ENV, timeout=10, pipe_size=None)


def subprocess_run() -> None:
    subprocess.run(SHELL, input=EVENT, capture_output=True, env=ENV, check=False)


async def asyncio_subprocess() -> None:
    child = await asyncio.create_subprocess_exec(
        *SHELL, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    await child.communicate(EVENT)


#: The event as hookgate's native format sends it (`bench` runs from the project dir).
ENVELOPE = {"event": "preToolCall", "session_id": "bench", "cwd": os.getcwd(), **PAYLOAD}


class PingPong:
    """The bare JSON-lines exchange with the persistent child, as a minimal client
    does it: the event encoded into the very line hookgate sends (checked against one
    captured from hookgate), written, a line read back and decoded, its id checked."""

    def __init__(self) -> None:
        if self.line(1) != hookgates_line():
            raise SystemExit(f"the bare line differs from hookgate's: {self.line(1)!r}")
        self.start()

    def start(self) -> None:
        self.child = subprocess.Popen([sys.executable, str(CHILD)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=ENV)  # fmt: skip
        assert self.child.stdin is not None
        assert self.child.stdout is not None
        self.stdin, self.stdout = self.child.stdin.fileno(), self.child.stdout.fileno()
        self.number = 0

    @staticmethod
    def line(number: int) -> bytes:
        event = json.dumps(ENVELOPE, ensure_ascii=False, separators=(",", ":")).encode()
        return b'{"id":%d,"event":%s}\n' % (number, event)

    def __call__(self) -> None:
        self.number += 1
        os.write(self.stdin, self.line(self.number))
        reply = os.read(self.stdout, 65536)
        while not reply.endswith(b"\n"):
            reply += os.read(self.stdout, 65536)
        assert json.loads(reply)["id"] == self.number

    def close(self) -> None:
        assert self.child.stdin is not None
        assert self.child.stdout is not None
        self.child.stdin.close()
        self.child.wait()
        self.child.stdout.close()


class LoopPingPong(PingPong):
    """The bare exchange on the event loop: the child's stdout watched by the loop
    (`add_reader`, once), each line awaited in a future that the reader settles."""

    def start(self) -> None:
        super().start()
        os.set_blocking(self.stdout, False)
        self.buffer = b""
        self.waiter: asyncio.Future[None] | None = None
        self.watched_by: asyncio.AbstractEventLoop | None = None

    def close(self) -> None:
        if self.watched_by is not None and not self.watched_by.is_closed():
            self.watched_by.remove_reader(self.stdout)
        super().close()

    def _on_readable(self) -> None:
        with contextlib.suppress(BlockingIOError):
            self.buffer += os.read(self.stdout, 65536)
            if b"\n" in self.buffer and self.waiter is not None and not self.waiter.done():
                self.waiter.set_result(None)

    async def exchange(self) -> None:
        loop = asyncio.get_running_loop()
        if self.watched_by is not loop:
            loop.add_reader(self.stdout, self._on_readable)
            self.watched_by = loop
        self.number += 1
        os.write(self.stdin, self.line(self.number))
        while b"\n" not in self.buffer:
            self.waiter = loop.create_future()
            await self.waiter
        reply, self.buffer = self.buffer, b""
        assert json.loads(reply)["id"] == self.number


def hookgates_line() -> bytes:
    """The first line a persistent hook reads from hookgate, for the event above."""
    with tempfile.TemporaryDirectory() as scratch:
        seen = Path(scratch) / "line"
        record = (f"import sys; open({str(seen)!r}, 'wb').write(sys.stdin.buffer.readline()); "
                  "print('{\"id\": 1}', flush=True)")  # fmt: skip
        capture = engine({"args": [sys.executable, "-c", record], "persistent": True})
        try:
            capture.run_sync("preToolCall", PAYLOAD)
        finally:
            capture.close()
        return seen.read_bytes()


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


class Exchanges:
    """The persistent exchanges: the two bare ones and hookgate's two drivers, each with
    its own child. Where a child lands moves its exchange by up to 3 µs (the bare one
    took from 22.3 to 25.2 µs, steady while it ran, from one start of the same program
    to the next, on the same processor), and that luck is the child's, not its
    parent's: every block round starts all four children afresh (`restart`), so that
    each ratio in blocks is taken over as many starts as rounds."""

    #: Exchanges each fresh child makes before a round times it: its start-up, warm-up.
    WARM = 20

    def __init__(self) -> None:
        resident = {"args": [sys.executable, str(CHILD)], "persistent": True}
        self.persistent_sync, self.persistent_async = engine(resident), engine(resident)
        self.ping_pong, self.loop_ping_pong = PingPong(), LoopPingPong()
        self.contenders: dict[str, Callable[[], Awaitable[object]]] = {
            "ping-pong": _blocking(self.ping_pong),
            "loop ping-pong": self.loop_ping_pong.exchange,
            "persistent run_sync": _blocking(
                lambda: self.persistent_sync.run_sync("preToolCall", PAYLOAD)
            ),
            "persistent await run": lambda: self.persistent_async.run("preToolCall", PAYLOAD),
        }

    async def restart(self, order: random.Random) -> None:
        """Stop every child; start each anew, in a shuffled order (the first one started
        lands on our processor more often than the others), and warm it up. A hookgate
        engine starts its hook's child at the next event."""
        await self.aclose()
        starts = {"ping-pong": self.ping_pong.start, "loop ping-pong": self.loop_ping_pong.start}
        for name in order.sample(list(self.contenders), len(self.contenders)):
            if name in starts:
                starts[name]()
            await self.contenders[name]()
        for _ in range(self.WARM):
            for exchange in self.contenders.values():
                await exchange()

    async def aclose(self) -> None:
        self.persistent_sync.close()
        await self.persistent_async.aclose()
        self.ping_pong.close()
        self.loop_ping_pong.close()


def _blocking(function: Callable[[], object]) -> Callable[[], Awaitable[object]]:
    """`function` as a contender on the event loop: called there, blocking it."""

    async def call() -> object:
        return function()

    return call


def measure(rounds: int, calls: int, block_rounds: int) -> tuple[Rounds, Rounds, dict[str, Rounds]]:
    """Each round: every contender's median seconds per call, `calls` calls each;
    interleaved (`rounds`), then in blocks, then in blocks pinned (`block_rounds` each)."""
    return asyncio.run(_rounds(rounds, calls, block_rounds))


Rounds = list[dict[str, float]]


async def _rounds(
    rounds: int, calls: int, block_rounds: int
) -> tuple[Rounds, Rounds, dict[str, Rounds]]:
    """The rounds, call by call, then in blocks (`IN_BLOCKS`, then `PINNED` pinned),
    on one running event loop, as an agent's runtime has (the blocking contenders
    block it while they run: nothing else runs here)."""
    one_hook, exchanges, node = engine({"command": "true"}), Exchanges(), Node()
    contenders: dict[str, Callable[[], Awaitable[object]]] = {
        "floor": _blocking(spawn_floor),
        "spawn guarded": _blocking(spawn_guarded),
        "process layer": _blocking(process_layer),
        "run_sync": _blocking(lambda: one_hook.run_sync("preToolCall", PAYLOAD)),
        "loop floor": loop_floor,
        "process layer awaited": process_layer_awaited,
        "await run": lambda: one_hook.run("preToolCall", PAYLOAD),
        "subprocess.run": _blocking(subprocess_run),
        "asyncio subprocess": asyncio_subprocess,
        **exchanges.contenders,
    }
    names = list(contenders) + (["node"] if node.child is not None else [])
    results = []
    order = random.Random(19)
    try:
        # Warm up: imports, the guardian, the children. Call by call, every exchange
        # wakes an idle processor (140 µs), and one child's luck (3 µs) hardly shows;
        # restarting them before each round moved the process hooks' ratios by 0.01-0.03x.
        await exchanges.restart(order)
        for name in contenders:
            await contenders[name]()
        for _ in range(rounds):
            samples: dict[str, list[float]] = defaultdict(list)
            for _ in range(calls):
                for name in order.sample(names, len(names)):
                    if name == "node":  # Node times itself, call by call, in turn too
                        timed = node.call()
                        samples["node spawnSync"].append(timed["sync"])
                        samples["node spawn"].append(timed["async"])
                        continue
                    started = time.perf_counter()
                    await contenders[name]()
                    samples[name].append(time.perf_counter() - started)
            results.append({name: statistics.median(times) for name, times in samples.items()})
        blocks = []
        for index in range(block_rounds):
            await exchanges.restart(order)
            blocks.append(await _block_round(index, calls, contenders, IN_BLOCKS))
        pinned = {
            placement: await _pinned_rounds(block_rounds, calls, contenders, exchanges, cpus, order)
            for placement, cpus in _placements().items()
        }
    finally:
        await exchanges.aclose()
        await one_hook.aclose()
        node.close()
    return results, blocks, pinned


#: Measured again in blocks of consecutive calls: the persistent hooks, their bare
#: exchange, and the floor to weigh them against.
IN_BLOCKS = (
    "floor", "ping-pong", "loop ping-pong", "persistent run_sync", "persistent await run"
)  # fmt: skip


#: The exchanges measured again with their children pinned.
PINNED = ("ping-pong", "loop ping-pong", "persistent run_sync", "persistent await run")


async def _block_round(
    index: int, calls: int, contenders: dict[str, Callable[[], Awaitable[object]]],
    names: Sequence[str],
) -> dict[str, float]:  # fmt: skip
    """One round of `calls` calls in a row of each of `names`, the order of the blocks
    rotating from round to round: what an agent that calls its hook again and again
    sees, the child still running when the next event comes (interleaved, every
    exchange waits for an idle processor to wake up)."""
    shift = index % len(names)
    medians = {}
    for name in [*names[shift:], *names[:shift]]:
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            await contenders[name]()
            times.append(time.perf_counter() - started)
        medians[name] = statistics.median(times)
    return medians


def _placements() -> dict[str, tuple[int, int]]:
    """Where the benchmark runs and where the persistent children do: one processor,
    and two (where there are two)."""
    mine, *others = sorted(os.sched_getaffinity(0))
    found = {"each child on the benchmark's processor": (mine, mine)}
    if others:
        found["each child on another processor"] = (mine, others[0])
    return found


async def _pinned_rounds(
    rounds: int, calls: int, contenders: dict[str, Callable[[], Awaitable[object]]],
    exchanges: Exchanges, cpus: tuple[int, int], order: random.Random,
) -> Rounds:  # fmt: skip
    """The exchanges' blocks with this process on `cpus[0]` and every persistent child
    (the bare exchanges' and hookgate's, started afresh each round) on `cpus[1]`; the
    affinity restored after."""
    allowed = os.sched_getaffinity(0)
    found = []
    try:
        for index in range(rounds):
            os.sched_setaffinity(0, allowed)  # the children start where they may
            await exchanges.restart(order)
            os.sched_setaffinity(0, {cpus[0]})
            for pid in _persistent_children():
                os.sched_setaffinity(pid, {cpus[1]})
            found.append(await _block_round(index, calls, contenders, PINNED))
    finally:
        os.sched_setaffinity(0, allowed)
    return found


def _persistent_children() -> list[int]:
    """Our children that run `CHILD`: the bare exchanges' and the persistent hooks'."""
    found = []
    for listing in Path("/proc/self/task").glob("*/children"):
        for pid in listing.read_text().split():
            with contextlib.suppress(OSError):
                if str(CHILD).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(int(pid))
    if len(found) != len(PINNED):
        raise SystemExit(f"expected {len(PINNED)} persistent children, found {found}")
    return found


ROWS = (
    ("floor", "floor: `posix_spawn`, stdin and stdout pipes, `waitpid` (baseline)", "1.00×"),
    ("spawn guarded", "the floor + new session, signals reset, stderr pipe", ""),
    ("process layer", "hookgate `run_process_sync` alone (no engine)", ""),
    ("run_sync", 'hookgate `HookEngine.run_sync`, one `command: "true"` hook', ""),
    ("loop floor", "the floor on the event loop: its exit awaited once (pidfd, a future)", ""),
    ("process layer awaited", "hookgate `await run_process` alone (no engine)", ""),
    ("await run", "hookgate `await HookEngine.run`, the same hook", "≤ 1.2×"),
    ("subprocess.run", "Python `subprocess.run` (input, captured output)", ""),
    ("asyncio subprocess", "Python asyncio `create_subprocess_exec` + `communicate`", ""),
    ("node spawnSync", "Node `child_process.spawnSync` (input, captured output)", ""),
    ("node spawn", "Node `child_process.spawn`, awaited (input, output read)", ""),
    ("ping-pong", "bare JSON-lines ping-pong with the Python child", ""),
    ("loop ping-pong", "the same ping-pong on the event loop (`add_reader`, a future)", ""),
    ("persistent run_sync", "hookgate persistent hook, `run_sync`, same child", "≤ 0.1×"),
    ("persistent await run", "hookgate persistent hook, `await run`, same child", "≤ 0.1×"),
)


def report(results: Rounds, blocks: Rounds, pinned: dict[str, Rounds]) -> str:
    floor = statistics.median(r["floor"] for r in blocks)
    lines = [
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f}; "
        f"{len(results)} rounds call by call, {len(blocks)} in blocks",
        "",
        "Call by call, in a shuffled order:",
        "",
        *_table(results, ROWS),
        "",
        *_against_ping_pong(results),
        "",
        "In blocks of consecutive calls, the order of the blocks rotating, each child where",
        "the scheduler started it: by chance, on our processor or another, so that the",
        "ratios to the bare exchange follow the placements (the pinned blocks below keep",
        "them equal):",
        "",
        *_table(blocks, [row for row in ROWS if row[0] in IN_BLOCKS]),
        "",
        *_against_ping_pong(blocks, target=""),
    ]
    for placement, found in pinned.items():
        lines += ["", f"In blocks, {placement} (pinned):", ""]
        for name, label, _ in ROWS:
            if name in PINNED:
                median = statistics.median(r[name] for r in found)
                lines.append(f"- {label}: {median * 1e6:,.1f} µs, {median / floor:.3f}× the floor")
        lines += _against_ping_pong(found)
    return "\n".join(lines)


def _ratios(results: Rounds, name: str, base: str) -> list[float]:
    return sorted(r[name] / r[base] for r in results if name in r)


def _spread(found: list[float]) -> str:
    return f"{statistics.median(found):.2f}× ({found[0]:.2f}–{found[-1]:.2f})"


def _table(results: Rounds, rows: Sequence[tuple[str, str, str]]) -> list[str]:
    lines = [
        "| what | per call (median of rounds) | vs floor (median, range) | target |",
        "| --- | ---: | ---: | --- |",
    ]
    for name, label, target in rows:
        values = [r[name] for r in results if name in r]
        if not values:
            lines.append(f"| {label} | skipped (not installed) | | |")
            continue
        shown = _spread(_ratios(results, name, "floor"))
        lines.append(
            f"| {label} | {statistics.median(values) * 1e6:,.0f} µs | {shown} | {target} |"
        )
    return lines


def _against_ping_pong(results: Rounds, target: str = "; target ≤ 1.3×") -> list[str]:
    lines = [
        f"- {name} vs the bare ping-pong: {_spread(_ratios(results, name, 'ping-pong'))}{target}"
        for name in ("persistent run_sync", "persistent await run")
    ]
    on_loop = _spread(_ratios(results, "persistent await run", "loop ping-pong"))
    return [*lines, f"- persistent await run vs the ping-pong on the event loop: {on_loop}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds call by call")
    parser.add_argument(
        "--block-rounds", type=int, default=15,
        help="rounds in blocks, and in each pinned placement (children started afresh each)",
    )  # fmt: skip
    parser.add_argument("--calls", type=int, default=200, help="calls per contender a round")
    args = parser.parse_args()
    adopt_orphans()
    print(report(*measure(args.rounds, args.calls, args.block_rounds)))


if __name__ == "__main__":
    main()
