"""What one guardrail verdict costs a tool call: a `model` hook on preToolCall.

Each round runs one preToolCall through `HookEngine.run` with: no hook that matches
(the baseline), a `command: "true"` hook (a process hook, for scale), a model hook
with a scripted checker, a model hook asking the loopback chat-completions server of
the tests (run in a child process, as a model server would be) through the openai
client, the same model hook answered from its verdict cache, and, as the floor of
the served case, one bare `openai` chat-completions call to the same server. Every
call but the cached one has its own arguments, so no verdict is reused.

    .venv/bin/python bench/guardrail_check.py [--rounds N]
    .venv/bin/python bench/guardrail_check.py --checker-url http://localhost:11434/v1 \
        --checker-model llama3.2:1b --rounds 20      # a real checker in place of the loopback one
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from hookgate.hooks import HookEngine, adopt_orphans, parse_hooks
from hookgate.hooks.files.yamlfile import Where

TESTS = Path(__file__).resolve().parent.parent / "tests"
if str(TESTS) not in sys.path:
    sys.path.append(str(TESTS))

from support.chat_server import ChatServer, ServedReply  # noqa: E402

WARMUP = 20  # rounds not counted: imports, first connections
ALLOW = json.dumps({"decision": "allow", "reason": "ordinary command"})
INSTRUCTIONS = "Block a command that sends data to another host."
SERVER_EXIT_S = 5.0


def serve(replies: int) -> None:
    """The child: a chat server with `replies` verdicts queued; runs until stdin closes."""
    with ChatServer() as server:
        server.queue(*[ServedReply(text=ALLOW)] * replies)
        print(server.url, flush=True)
        sys.stdin.read()


def engine(hooks: dict[str, Any], base_dir: Path) -> HookEngine:
    config = parse_hooks(hooks, Where("bench.yaml"), base_dir=base_dir)
    return HookEngine(config, session_id="bench", project_dir=str(base_dir))


async def measure(url: str, model: str, base_dir: Path, rounds: int) -> dict[str, list[float]]:
    import openai

    (base_dir / "verdicts.yaml").write_text(json.dumps([{"decision": "allow"}] * (rounds + WARMUP)))
    model_hook = {"matcher": "^shell$", "instructions": INSTRUCTIONS}
    engines = {
        "no hook matches (baseline)": engine({"preToolCall": [{"matcher": "^none$", "command": "true"}]}, base_dir),
        'a `command: "true"` hook': engine({"preToolCall": [{"command": "true"}]}, base_dir),
        "model hook, scripted checker": engine({"preToolCall": [{**model_hook, "model": "scripted:verdicts.yaml"}]}, base_dir),
        "model hook, openai client → loopback server": engine({"preToolCall": [{**model_hook, "model": {"name": model, "base_url": url}}]}, base_dir),
    }  # fmt: skip
    cached = engine({"preToolCall": [{**model_hook, "model": "scripted:verdicts.yaml"}]}, base_dir)
    client = openai.AsyncOpenAI(base_url=url, api_key="none", max_retries=0)
    times: dict[str, list[float]] = {name: [] for name in [*engines, "model hook, cached verdict", "bare openai call (floor of the served case)"]}  # fmt: skip

    async def timed(name: str, index: int, call: Awaitable[Any]) -> None:
        started = time.perf_counter()  # a coroutine does nothing until awaited
        await call
        if index >= WARMUP:
            times[name].append(time.perf_counter() - started)

    await cached.run("preToolCall", {"tool": "shell", "arguments": {"command": "ls"}})
    for index in range(WARMUP + rounds):
        payload = {"tool": "shell", "arguments": {"command": f"ls {index}"}}
        for name, each in engines.items():
            await timed(name, index, each.run("preToolCall", payload))
        await timed("model hook, cached verdict", index,
                    cached.run("preToolCall", {"tool": "shell", "arguments": {"command": "ls"}}))  # fmt: skip
        await timed("bare openai call (floor of the served case)", index, client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": f"ls {index}"}],
            response_format={"type": "json_object"}))  # fmt: skip
    for each in [*engines.values(), cached]:
        await each.aclose()
    await client.close()
    return times


def main(rounds: int, checker_url: str | None, checker_model: str) -> None:
    adopt_orphans()
    child = None
    if checker_url is None:
        # The served case and the floor each take one reply a round.
        child = subprocess.Popen([sys.executable, __file__, "--serve", str(2 * (rounds + WARMUP))],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert child.stdout is not None
        checker_url = child.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            times = asyncio.run(measure(checker_url, checker_model, Path(tmp).resolve(), rounds))
    finally:
        if child is not None:
            assert child.stdin is not None
            child.stdin.close()
            child.wait(timeout=SERVER_EXIT_S)
    base = statistics.median(times["no hook matches (baseline)"])
    print(f"{rounds} rounds, medians\n")
    print("| preToolCall with | per call (median) | p95 | vs baseline |")
    print("| --- | ---: | ---: | ---: |")
    for name, values in times.items():
        median = statistics.median(values)
        p95 = statistics.quantiles(values, n=20)[-1]
        print(f"| {name} | {median * 1e3:.3f} ms | {p95 * 1e3:.3f} ms | {median / base:.1f}× |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--checker-url", help="an OpenAI-compatible server to time instead")
    parser.add_argument("--checker-model", default="bench", help="its model name")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve is not None:
        serve(arguments.serve)
    else:
        main(arguments.rounds, arguments.checker_url, arguments.checker_model)
