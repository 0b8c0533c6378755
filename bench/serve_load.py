"""`hookgate serve` under load on loopback: decisions per second, p50 and p99, errors.

For each hook kind (a `python:` hook, a process hook, a persistent hook), and for the
baseline of no hook at all (the HTTP, trust and audit path alone), a scratch
project's trusted agent file is served by `hookgate serve --workers 2`, and
`--clients` concurrent loopback clients POST preToolCall events to `/v1/hook` for
`--seconds` each (the whole run stops by itself within 60 s). Each reply is checked:
a decision that is not the expected one counts as an error. Prints a Markdown table
and the load average.

    .venv/bin/python bench/serve_load.py [--seconds S] [--clients N] [--workers N] [--kinds K,…]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

HOOKGATE = Path(sys.executable).with_name("hookgate")
TOKEN = "bench-token-0123456789abcdef"
#: Seconds the service may take to answer /healthz.
START_WAIT = 30.0
#: The longest the whole run may take; each kind gets its share.
TOTAL_LIMIT = 60.0
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


def hooks_of(kind: str, directory: Path) -> dict[str, Any]:
    return {} if kind == "none" else {"preToolCall": [hook_of(kind, directory)]}


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


def start(kind: str, root: Path, workers: int) -> tuple[subprocess.Popen[bytes], str]:
    directory = root / kind
    directory.mkdir()
    agent = directory / "hookgate.yaml"
    agent.write_text(json.dumps({"hooks": hooks_of(kind, directory)}))
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
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_WAIT
    while True:
        try:
            if httpx2.get(url + "/healthz", timeout=1.0).status_code == 200:
                return process, url
        except httpx2.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            said = (root / f"{kind}.stderr").read_text(errors="replace")[-2000:]
            raise SystemExit(f"serve did not start: {said}")
        time.sleep(0.1)


def event(number: int) -> tuple[bytes, bool]:
    """The `number`th event: every fourth one is denied."""
    denied = number % 4 == 0
    command = "rm -rf build" if denied else f"echo {number}"
    body = {"event": "preToolCall", "session_id": f"bench-{number % 50}", "cwd": "/tmp",
            "tool": "shell", "call_id": f"c{number}", "arguments": {"command": command}}  # fmt: skip
    return json.dumps(body).encode(), denied


async def load(url: str, seconds: float, clients: int, guarded: bool) -> tuple[list[float], int]:
    latencies: list[float] = []
    errors = 0
    counter = iter(range(10**9))
    stop = time.monotonic() + seconds
    headers = {"authorization": f"Bearer {TOKEN}"}

    async def client(http: httpx2.AsyncClient) -> None:
        nonlocal errors
        while time.monotonic() < stop:
            body, denied = event(next(counter))
            denied = denied and guarded  # the baseline has no guard: everything is allowed
            began = time.perf_counter()
            response = None
            try:
                response = await http.post(url + "/v1/hook", content=body, headers=headers)
                ok = response.status_code == 200 and ('"deny"' in response.text) == denied
            except httpx2.HTTPError:
                ok = False
            latencies.append(time.perf_counter() - began)
            errors += not ok
            if not ok and errors <= 3:  # the first few, to say what went wrong
                print(f"error: {command_of(body)}: {status_of(response)}", file=sys.stderr)

    limits = httpx2.Limits(max_connections=clients)
    async with httpx2.AsyncClient(timeout=30.0, limits=limits, trust_env=False) as http:
        await asyncio.gather(*(client(http) for _ in range(clients)))
    return latencies, errors


def command_of(body: bytes) -> str:
    return str(json.loads(body)["arguments"]["command"])


def status_of(response: httpx2.Response | None) -> str:
    return "no response" if response is None else f"{response.status_code} {response.text[:300]}"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0, help="per hook kind (≤ 13)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kinds", default=",".join(KINDS), help="the first is the baseline")
    args = parser.parse_args()
    kinds = [kind for kind in args.kinds.split(",") if kind in KINDS]
    seconds = min(args.seconds, TOTAL_LIMIT / len(kinds) - 2)  # bounded whatever is asked
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for kind in kinds:
            process, url = start(kind, Path(scratch), args.workers)
            try:
                latencies, errors = asyncio.run(load(url, seconds, args.clients, kind != "none"))
            finally:
                process.terminate()
                process.wait(10)
            said = (Path(scratch) / f"{kind}.stderr").read_text(errors="replace")
            if said.strip():
                print(f"{kind}: the service said: {said[-1000:]}", file=sys.stderr)
            rows.append((kind, len(latencies) / seconds, percentile(latencies, 0.5),
                         percentile(latencies, 0.99), errors, len(latencies)))  # fmt: skip
    print(f"`hookgate serve --workers {args.workers}`, {args.clients} loopback clients, "
          f"{seconds:g} s per kind, {os.cpu_count()} CPUs\n")  # fmt: skip
    print("| hook | decisions/s | vs no hook | p50 | p99 | errors / requests |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    baseline = rows[0][1]
    for kind, rate, p50, p99, errors, count in rows:
        print(f"| {kind} | {rate:,.0f} | {rate / baseline:.2f}× | {p50 * 1000:.1f} ms "
              f"| {p99 * 1000:.1f} ms | {errors} / {count:,} |")  # fmt: skip
    print(f"\nload average after the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
