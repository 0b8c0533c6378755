"""`hookgate serve` under load on loopback: decisions per second, p50 and p99, errors,
and where the processor time went.

For each hook kind (a `python:` hook, a process hook, a persistent hook), and for the
baseline of no hook at all (the HTTP, trust and audit path alone), a scratch
project's trusted agent file is served by `hookgate serve --workers 2`, and
`--clients` concurrent loopback connections (HTTP/1.1 keep-alive) POST preToolCall
events to `/v1/hook`, for `--seconds` (at most 60) or `--requests` in all, after a
short warm-up: each as soon as the last is answered, or at `--rate` requests a second
in all (each late reply timed from when its request was due). Each reply is checked: a decision that is not the expected one (every
fourth event is an `rm -rf` the hook must deny) counts as an error. The run stops by
itself: a kind never takes longer than its share plus the service's start.

The load generator shares the machine's cores with the service, so it is made cheap:
`--client raw` (the default) writes prebuilt request bytes on asyncio streams and
reads the replies with a minimal parser; `--client httpx` uses an httpx client with
pooled connections, for comparison. The processor time of the generator (this
process), of the service (its process tree, hooks included) and of the whole machine
(`/proc/stat`) are read before and after each kind: what share each took.

    .venv/bin/python bench/serve_load.py [--seconds S | --requests N] [--rate R]
        [--clients N] [--workers N] [--kinds K,…] [--client raw|httpx] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple

HOOKGATE = Path(sys.executable).with_name("hookgate")
TOKEN = "bench-token-0123456789abcdef"
#: Seconds the service may take to answer /healthz.
START_WAIT = 30.0
#: The longest one kind is driven, whatever is asked.
MAX_SECONDS = 60.0
#: Seconds of requests before the measured ones: starts, imports, first checks.
WARM_UP = 1.0
#: Seconds one request may take before it counts as an error.
REQUEST_TIMEOUT = 30.0
#: Seconds between two connections opened: time for another worker to take the next.
CONNECT_PAUSE = 0.02
#: Distinct events sent, in turn (prebuilt): every fourth is denied.
EVENTS = 64
GUARD_PY = """
def check(event):
    if "rm -rf" in event["arguments"].get("command", ""):
        return {"action": "deny", "reason": "no rm -rf"}
    return None
"""
GUARD_SH = """#!/bin/sh
grep -q 'rm -rf' && { echo '{"action": "deny", "reason": "no rm -rf"}'; exit 0; }
exit 0
"""
GUARD_PERSISTENT = """import json, sys
for line in sys.stdin:
    message = json.loads(line)
    command = message["event"].get("arguments", {}).get("command", "")
    reply = {"action": "deny", "reason": "no rm -rf"} if "rm -rf" in command else None
    sys.stdout.write(json.dumps({"id": message["id"], "reply": reply}) + "\\n")
    sys.stdout.flush()
"""
KINDS = ("none", "python", "process", "persistent")
_TICK = os.sysconf("SC_CLK_TCK")


def hook_of(kind: str, directory: Path) -> dict[str, Any]:
    if kind == "python":
        (directory / "benchguard.py").write_text(GUARD_PY)
        return {"name": "guard", "python": "benchguard:check", "onError": "fail"}
    if kind == "process":
        (directory / "guard.sh").write_text(GUARD_SH)
        (directory / "guard.sh").chmod(0o755)
        return {"name": "guard", "command": "./guard.sh", "onError": "fail"}
    (directory / "pguard.py").write_text(GUARD_PERSISTENT)
    return {"name": "guard", "args": [sys.executable, "./pguard.py"], "persistent": True,
            "onError": "fail"}  # fmt: skip


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start(kind: str, root: Path, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    """`hookgate serve` of a scratch project guarded by a hook of `kind`, answering."""
    directory = root / kind
    directory.mkdir()
    agent = directory / "hookgate.yaml"
    hooks = {} if kind == "none" else {"preToolCall": [hook_of(kind, directory)]}
    agent.write_text(json.dumps({"hooks": hooks}))
    env = {**os.environ, "HOOKGATE_HOME": str(root / f"{kind}-home"),
           "HOOKGATE_SERVE_TOKEN": TOKEN, "PYTHONPATH": str(directory)}  # fmt: skip
    subprocess.run([str(HOOKGATE), "trust", "--yes", str(agent)], env=env, check=True,
                   capture_output=True, cwd=directory)  # fmt: skip
    port = free_port()
    process = subprocess.Popen(
        [str(HOOKGATE), "serve", "--agent", str(agent), "--port", str(port),
         "--workers", str(workers)],
        env=env, cwd=directory, stdout=subprocess.DEVNULL,
        stderr=(root / f"{kind}.stderr").open("wb"),  # a pipe nobody reads would fill
    )  # fmt: skip
    deadline = time.monotonic() + START_WAIT
    while not _healthy(port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            said = (root / f"{kind}.stderr").read_text(errors="replace")[-2000:]
            raise SystemExit(f"serve did not start: {said}")
        time.sleep(0.1)
    return process, port


def _healthy(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as connection:
            connection.sendall(b"GET /healthz HTTP/1.1\r\nhost: bench\r\n\r\n")
            return connection.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def events(guarded: bool) -> list[tuple[bytes, bool]]:
    """The events sent in turn, with whether each must be denied (none without a guard)."""
    made = []
    for number in range(EVENTS):
        denied = number % 4 == 0
        command = "rm -rf build" if denied else f"echo {number}"
        body = {"event": "preToolCall", "session_id": f"bench-{number % 16}", "cwd": "/tmp",
                "tool": "shell", "call_id": f"c{number}", "arguments": {"command": command}}  # fmt: skip
        made.append((json.dumps(body).encode(), denied and guarded))
    return made


#: One request: (body) → (status, reply body); raises on a broken connection.
Post = Callable[[bytes], Awaitable[tuple[int, bytes]]]


async def raw_client(port: int) -> tuple[Post, Callable[[], None]]:
    """A keep-alive connection that writes prebuilt requests and reads each reply."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (f"POST /v1/hook HTTP/1.1\r\nhost: bench\r\nauthorization: Bearer {TOKEN}\r\n"
            "content-type: application/json\r\ncontent-length: ").encode()  # fmt: skip
    prebuilt: dict[bytes, bytes] = {}

    async def post(body: bytes) -> tuple[int, bytes]:
        request = prebuilt.get(body)
        if request is None:
            request = prebuilt[body] = head + b"%d\r\n\r\n" % len(body) + body
        writer.write(request)
        reply = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in reply.split(b"\r\n")[1:]:
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        return int(reply[9:12]), await reader.readexactly(length)

    return post, writer.close


async def httpx_client(port: int) -> tuple[Post, Callable[[], None]]:
    """The same requests through an httpx client of its own (one connection)."""
    import httpx2

    http = httpx2.AsyncClient(timeout=REQUEST_TIMEOUT, trust_env=False)
    url, headers = f"http://127.0.0.1:{port}/v1/hook", {"authorization": f"Bearer {TOKEN}"}

    async def post(body: bytes) -> tuple[int, bytes]:
        response = await http.post(url, content=body, headers=headers)
        return response.status_code, response.content

    def close() -> None:
        asyncio.get_running_loop().create_task(http.aclose())

    return post, close


class Counts(NamedTuple):
    latencies: list[float]
    errors: int
    sent: int


async def load(port: int, args: argparse.Namespace, guarded: bool, seconds: float) -> Counts:
    """Drive the service with `args.clients` connections: `WARM_UP` seconds unmeasured,
    then `seconds` (or `args.requests` requests in all) measured."""
    made = events(guarded)
    latencies: list[float] = []
    errors = sent = 0
    counter = iter(range(10**12))
    measured_from = time.monotonic() + WARM_UP
    stop = measured_from + seconds
    connect = raw_client if args.client == "raw" else httpx_client

    async def client(order: int) -> None:
        nonlocal errors, sent
        post, close = opened[order]
        # At a set rate, each connection sends on its own schedule, and a reply that
        # comes late counts from when the request was due (not from when a late
        # connection got round to it), so a stall shows in the percentiles.
        interval = args.clients / args.rate if args.rate else 0.0
        due = time.perf_counter() + order * interval / args.clients
        try:
            while time.monotonic() < stop:
                number = next(counter)
                if args.requests and number >= args.requests:
                    break
                body, denied = made[number % EVENTS]
                began = time.perf_counter()
                if interval:
                    if due > began:
                        await asyncio.sleep(due - began)
                    began, due = due, due + interval
                try:
                    status, reply = await asyncio.wait_for(post(body), REQUEST_TIMEOUT)
                    ok = status == 200 and (b'"deny"' in reply) == denied
                except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
                    status, reply, ok = 0, repr(exc).encode(), False
                    post, close = await connect(port)
                sent += 1
                errors += not ok
                if not ok and errors <= 3:  # the first few, to say what went wrong
                    print(f"error: {status} {reply[:300]!r}", file=sys.stderr)
                if args.requests or time.monotonic() >= measured_from:
                    latencies.append(time.perf_counter() - began)
        finally:
            close()

    # One at a time, a moment apart: the workers share the listening socket, and one
    # woken by a burst of connections accepts them all (asyncio accepts what is pending).
    opened = []
    for _ in range(args.clients):
        opened.append(await connect(port))
        await asyncio.sleep(CONNECT_PAUSE)
    await asyncio.gather(*(client(order) for order in range(args.clients)))
    return Counts(latencies, errors, sent)


def tree_cpu(root: int) -> float:
    """Seconds of processor time of `root` and its descendants (and their reaped children)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(field) for field in fields[11:15]) / _TICK
    tree, grown = {root}, True
    while grown:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grown = bool(more)
    return sum(times.get(pid, 0.0) for pid in tree)


def machine_cpu() -> float:
    """Seconds of processor time all processors spent busy (not idle, not waiting)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / _TICK


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def run_kind(kind: str, root: Path, args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    process, port = start(kind, root, args.workers)
    try:
        before = (time.monotonic(), own_cpu(), tree_cpu(process.pid), machine_cpu())
        counts = asyncio.run(load(port, args, kind != "none", seconds))
        after = (time.monotonic(), own_cpu(), tree_cpu(process.pid), machine_cpu())
    finally:
        process.terminate()
        process.wait(30)
    said = (root / f"{kind}.stderr").read_text(errors="replace")
    if said.strip():
        print(f"{kind}: the service said: {said[-1000:]}", file=sys.stderr)
    wall, client, server, busy = (b - a for a, b in zip(before, after, strict=True))
    measured = seconds if not args.requests else wall
    decided = len(counts.latencies)
    return {
        "kind": kind, "decisions_per_s": decided / measured, "requests": counts.sent,
        "errors": counts.errors, "decided": decided,
        "p50_ms": percentile(counts.latencies, 0.5) * 1000,
        "p99_ms": percentile(counts.latencies, 0.99) * 1000,
        "server_cpu_ms": server / counts.sent * 1000, "client_cpu_ms": client / counts.sent * 1000,
        "server_share": server / busy, "client_share": client / busy,
        "machine_busy": busy / wall / (os.cpu_count() or 1),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0, help="measured, per kind (≤ 60)")
    parser.add_argument("--requests", type=int, default=0, help="in all, per kind, instead")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kinds", default=",".join(KINDS), help="of " + ",".join(KINDS))
    parser.add_argument("--rate", type=float, default=0, help="decisions/s to send (0: at once)")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw")
    parser.add_argument("--json", action="store_true", help="one JSON object a kind")
    args = parser.parse_args()
    kinds = [kind for kind in args.kinds.split(",") if kind in KINDS]
    seconds = min(args.seconds, MAX_SECONDS)  # bounded whatever is asked
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for kind in kinds:
            rows.append(run_kind(kind, Path(scratch), args, seconds))
            if args.json:
                print(json.dumps(rows[-1]), flush=True)
    if not args.json:
        print_table(rows, args, seconds)
    return 1 if any(row["errors"] for row in rows) else 0


def print_table(rows: list[dict[str, Any]], args: argparse.Namespace, seconds: float) -> None:
    length = f"{args.requests:,} requests" if args.requests else f"{seconds:g} s"
    pace = f"{args.rate:,.0f} requests/s" if args.rate else "each as soon as the last is answered"
    print(f"`hookgate serve --workers {args.workers}`, {args.clients} loopback connections "
          f"({args.client} client, {pace}), {length} per kind, {os.cpu_count()} CPUs\n")  # fmt: skip
    print(
        "| hook | decisions/s | p50 | p99 | errors / requests | service CPU a request "
        "| generator CPU a request | CPU: service / generator / rest | machine busy |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        rest = 1 - row["server_share"] - row["client_share"]
        print(f"| {row['kind']} | {row['decisions_per_s']:,.0f} | {row['p50_ms']:.1f} ms "
              f"| {row['p99_ms']:.1f} ms | {row['errors']} / {row['requests']:,} "
              f"| {row['server_cpu_ms']:.3f} ms | {row['client_cpu_ms']:.3f} ms "
              f"| {row['server_share']:.0%} / {row['client_share']:.0%} / {rest:.0%} "
              f"| {row['machine_busy']:.0%} |")  # fmt: skip
    print(f"\nload average after the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    sys.exit(main())
