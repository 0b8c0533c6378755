"""What the agent runtime itself costs per turn and per tool call, next to the OpenAI Agents SDK.

Both frameworks play the same scripted conversation against the same loopback
chat-completions server (`tests/support/chat_server.py`): a turn is K calls of a no-op
`echo` tool, one per streamed model reply, then a streamed text answer. The server
answers from a queue with no delay and the tool does nothing, so what a turn costs is
the framework, the `openai` client and the server; the cost of the same streamed
requests made with the `openai` client alone is measured in the same run, turn for
turn, and subtracted. Prints Markdown tables and the machine they were measured on.

    .venv/bin/python bench/runtime_turn.py [--turns N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import agents
from openai import AsyncOpenAI

from hookgate.hooks import adopt_orphans
from hookgate.messages import ToolSpec
from hookgate.runtime.agent import AgentSession, open_agent
from hookgate.runtime.consent import AlwaysDeny
from hookgate.runtime.turn import Answered, run_turn
from hookgate.security.trust.record import trust_agent_file
from hookgate.security.trust.store import TrustStore
from hookgate.store.session import SessionStore
from hookgate.tools import ToolContext, ToolResult
from hookgate.view import QuietView

# The loopback server lives with the tests. Appended, so it shadows no installed package.
TESTS = Path(__file__).resolve().parent.parent / "tests"
if str(TESTS) not in sys.path:
    sys.path.append(str(TESTS))

from support.chat_server import ChatServer, ServedReply, ServedToolCall  # noqa: E402

MODEL = "bench"
SYSTEM = "You are a benchmark. Call the tools you are told to, then answer."
QUESTION = "Echo ping, then say done."
ECHO_TEXT = "ping"
ANSWER = "done: ping"
TOOL_CALLS = 5  # K of the longer turn; the per-call cost is the slope between K=0 and this
WARMUP_TURNS = 20  # rounds not counted: lazy imports, first connections, caches
# Every client gets the runtime's own settings, so a retry or a timeout can't differ.
CLIENT_TIMEOUT_S = 120.0
CLIENT_RETRIES = 0
SERVER_EXIT_S = 5.0  # how long the server process may take to exit once told to
PACKAGES = ("hookgate", "openai", "openai-agents", "httpx", "httpx2")


class BenchError(Exception):
    """A turn did not play the script as written: its timing would mean nothing."""


@dataclass
class Tally:
    """How many times an echo tool ran, whichever framework called it."""

    calls: int = 0


class ServerProcess:
    """`ChatServer` in a child process, as a model server would be: it shares no GIL
    with the framework measured. Replies are queued over the child's stdin, untimed."""

    def __init__(self) -> None:
        self._child = subprocess.Popen(
            [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.url = self._read()

    @property
    def pid(self) -> int:
        return self._child.pid

    def queue_turn(self, tool_calls: int) -> None:
        """Queue the replies of one turn with `tool_calls` tool calls."""
        self._ask(f"queue {tool_calls}")

    def remaining(self) -> int:
        """Queued replies no request has taken yet."""
        return int(self._ask("remaining"))

    def _ask(self, command: str) -> str:
        assert self._child.stdin is not None
        self._child.stdin.write(command + "\n")
        self._child.stdin.flush()
        return self._read()

    def _read(self) -> str:
        assert self._child.stdout is not None
        line = self._child.stdout.readline()
        if not line:
            raise BenchError(f"the server process ended (exit status {self._child.wait()})")
        return line.strip()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._child.stdin is not None
        self._child.stdin.close()  # the child's cue to close the server and exit
        try:
            self._child.wait(timeout=SERVER_EXIT_S)
        except subprocess.TimeoutExpired:
            self._child.kill()
            self._child.wait()


def serve() -> None:
    """The child's side of `ServerProcess`: print the URL, then obey stdin until it closes."""
    with ChatServer() as server:
        print(server.url, flush=True)
        for line in sys.stdin:
            command, _, argument = line.strip().partition(" ")
            if command == "queue":
                server.queue(*script(int(argument)))
                print("ok", flush=True)
            else:
                print(server.remaining, flush=True)


def script(tool_calls: int) -> list[ServedReply]:
    """The replies of one turn: `tool_calls` single-call replies, then the answer."""
    call = ServedReply(tool_calls=[ServedToolCall("echo", {"text": ECHO_TEXT})])
    return [call] * tool_calls + [ServedReply(text=ANSWER)]


def allow_hook(event: Mapping[str, Any]) -> None:
    """The Python-callable hook: reads nothing, changes nothing, allows everything."""


ECHO_SPEC = ToolSpec(
    name="echo",
    description="Return the text unchanged.",
    parameters={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
)


class EchoTool:
    """hookgate's no-op tool: gives back its argument."""

    spec = ECHO_SPEC
    needs_consent = False

    def __init__(self, tally: Tally) -> None:
        self._tally = tally

    async def run(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        self._tally.calls += 1
        return ToolResult(str(arguments.get("text", "")))


def sdk_echo_tool(tally: Tally) -> agents.FunctionTool:
    """The Agents SDK's no-op tool; async, as a sync one would hop to a worker thread."""

    @agents.function_tool
    async def echo(text: str) -> str:
        """Return the text unchanged."""
        tally.calls += 1
        return text

    return echo


def client_for(url: str) -> AsyncOpenAI:
    return AsyncOpenAI(
        base_url=url, api_key="x", timeout=CLIENT_TIMEOUT_S, max_retries=CLIENT_RETRIES
    )


class Contender(Protocol):
    name: str
    runs_tools: bool

    def reset(self) -> None:
        """Start the next turn from an empty conversation (not timed)."""

    async def turn(self) -> str:
        """Play one queued turn; return the answer."""
        ...

    async def aclose(self) -> None: ...


class BareClient:
    """The baseline: the same streamed requests with the `openai` client alone, no framework."""

    name = "bare `openai` client, same requests (baseline)"
    runs_tools = False

    def __init__(self, url: str) -> None:
        self._client = client_for(url)
        self._tools: Any = [
            {"type": "function", "function": {"name": ECHO_SPEC.name,
             "description": ECHO_SPEC.description, "parameters": dict(ECHO_SPEC.parameters)}}
        ]  # fmt: skip

    def reset(self) -> None:
        pass

    async def turn(self) -> str:
        messages: list[Any] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": QUESTION},
        ]
        arguments = json.dumps({"text": ECHO_TEXT})
        while True:
            text, call_ids = await self._stream(messages)
            if not call_ids:
                return text
            calls = [{"id": call_id, "type": "function",
                      "function": {"name": "echo", "arguments": arguments}}
                     for call_id in call_ids]  # fmt: skip
            messages.append({"role": "assistant", "content": text, "tool_calls": calls})
            messages += [
                {"role": "tool", "tool_call_id": call_id, "content": ECHO_TEXT}
                for call_id in call_ids
            ]

    async def _stream(self, messages: list[Any]) -> tuple[str, list[str]]:
        # The messages travel pre-encoded in `extra_body`, as hookgate's client sends them:
        # the SDK would otherwise check each one against its types on every request,
        # a cost of the SDK's path, not of the requests both sides make.
        stream = await self._client.chat.completions.create(
            model=MODEL, messages=[], extra_body={"messages": messages}, tools=self._tools,
            stream=True,
        )  # fmt: skip
        text: list[str] = []
        call_ids: list[str] = []
        async for chunk in stream:
            delta = chunk.choices[0].delta
            text.append(delta.content or "")
            call_ids += [call.id for call in delta.tool_calls or () if call.id]
        return "".join(text), call_ids

    async def aclose(self) -> None:
        await self._client.close()


class Hookgate:
    """hookgate's real runtime: `open_agent` once, then `run_turn` per turn."""

    runs_tools = True

    def __init__(self, name: str, agent: AgentSession) -> None:
        self.name = name
        self._agent = agent

    @classmethod
    async def open(cls, name: str, agent_file: Path, store: SessionStore, tally: Tally) -> Hookgate:
        trust_agent_file(agent_file, store=TrustStore(store.home))  # as `hookgate trust` does
        agent = await open_agent(
            agent_file,
            notify=_refuse_notice,
            consent=AlwaysDeny(),  # never asked: the agent file says `yolo: true`
            store=store,
            extra_tools=[EchoTool(tally)],
        )
        return cls(name, agent)

    def reset(self) -> None:
        # Each turn starts from an empty conversation, as each `Runner.run` does; the
        # session file keeps growing, one appended line per message, as in real use.
        self._agent.history.messages.clear()

    async def turn(self) -> str:
        view = QuietView()
        outcome = await run_turn(self._agent, QUESTION, view)
        if view.notices:
            raise BenchError(f"{self.name}: notices {view.notices!r}")
        if not isinstance(outcome, Answered):
            raise BenchError(f"{self.name}: the turn ended with {outcome!r}")
        return outcome.text

    async def aclose(self) -> None:
        await self._agent.aclose()


def _refuse_notice(text: str) -> None:
    raise BenchError(f"unexpected notice: {text}")


class AgentsSDK:
    """The OpenAI Agents SDK: one `Agent`, `Runner.run_streamed` per turn, tracing off."""

    name = f"OpenAI Agents SDK {importlib.metadata.version('openai-agents')}"
    runs_tools = True

    def __init__(self, url: str, tally: Tally) -> None:
        self._client = client_for(url)
        model = agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=self._client)
        self._agent = agents.Agent(
            name="bench", instructions=SYSTEM, model=model, tools=[sdk_echo_tool(tally)]
        )
        self._run_config = agents.RunConfig(tracing_disabled=True)

    def reset(self) -> None:
        pass

    async def turn(self) -> str:
        result = agents.Runner.run_streamed(self._agent, QUESTION, run_config=self._run_config)
        async for _ in result.stream_events():
            pass
        return str(result.final_output)

    async def aclose(self) -> None:
        await self._client.close()


def write_agent_file(directory: Path, url: str, hooks: Mapping[str, Any]) -> Path:
    """An agent file with `hooks` on preToolCall and postToolCall (JSON is YAML too)."""
    document = {
        "model": {"name": MODEL, "base_url": url},
        "system": SYSTEM,
        "yolo": True,
        "tools": [],
        "hooks": {"preToolCall": [dict(hooks)], "postToolCall": [dict(hooks)]} if hooks else {},
    }
    path = directory / f"agent-{len(list(directory.glob('agent-*')))}.yaml"
    path.write_text(json.dumps(document, indent=2))
    return path


async def open_contenders(url: str, scratch: Path, tally: Tally) -> list[Contender]:
    store = SessionStore(scratch / "home")
    hookgate_configs: list[tuple[str, Mapping[str, Any]]] = [
        ("hookgate, no hooks", {}),
        (
            "hookgate, a Python hook on pre+postToolCall",
            {"python": f"{__name__}:allow_hook"},
        ),  # this module, as run
        ('hookgate, a `command: "true"` hook on pre+postToolCall', {"command": "true"}),
    ]
    contenders: list[Contender] = [BareClient(url), AgentsSDK(url, tally)]
    for name, hooks in hookgate_configs:
        agent_file = write_agent_file(scratch, url, hooks)
        contenders.append(await Hookgate.open(name, agent_file, store, tally))
    return contenders


class Timing(NamedTuple):
    wall: float
    cpu: float
    """Of this process only, so the server's share and waiting for neighbours are out."""


async def timed_turn(contender: Contender, server: ServerProcess, k: int, tally: Tally) -> Timing:
    """Seconds of one turn with `k` tool calls; raises unless it played the script exactly."""
    server.queue_turn(k)
    contender.reset()
    # No turn pays for the garbage of the one before, another framework's perhaps; what
    # a turn allocates is collected in its own time only as far as gen0 and gen1 go.
    gc.collect()
    calls_before = tally.calls
    started, cpu_started = time.perf_counter(), time.process_time()
    answer = await contender.turn()
    elapsed = Timing(time.perf_counter() - started, time.process_time() - cpu_started)
    ran, left = tally.calls - calls_before, server.remaining()
    if answer != ANSWER or left or ran != (k if contender.runs_tools else 0):
        raise BenchError(
            f"{contender.name}: answered {answer!r} after {ran} echo calls with "
            f"{left} replies left (K={k})"
        )
    return elapsed


Samples = dict[tuple[str, int], list[Timing]]
CLOCKS = {
    "wall": "wall clock (what the user waits)",
    "cpu": "CPU time of the agent's process (steadier: neither the server nor a busy "
    "neighbour counts, nor a hook's own process)",
}
"""Turn times by (contender, K); index i of every list is round i."""


async def measure(server: ServerProcess, scratch: Path, turns: int, warmup: int) -> Samples:
    """Every contender plays both turns once a round, in an order that rotates, so drift
    and busy neighbours hit all alike; rounds pair each turn with the baseline's."""
    tally = Tally()
    contenders = await open_contenders(server.url, scratch, tally)
    samples: Samples = defaultdict(list)
    try:
        for round_ in range(warmup + turns):
            if round_ == warmup:
                gc.collect()
                gc.freeze()  # what exists now lives on: no collection need scan it again
            shift = round_ % len(contenders)
            for contender in contenders[shift:] + contenders[:shift]:
                for k in (0, TOOL_CALLS):
                    elapsed = await timed_turn(contender, server, k, tally)
                    if round_ >= warmup:
                        samples[contender.name, k].append(elapsed)
    finally:
        for contender in contenders:
            await contender.aclose()
    return dict(samples)


@dataclass(frozen=True)
class Stats:
    mean: float
    ci95: float
    """Half the width of the mean's 95% confidence interval (normal approximation)."""
    p50: float
    p95: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Stats:
        cuts = statistics.quantiles(seconds, n=20, method="inclusive")
        ci95 = 1.96 * statistics.stdev(seconds) / math.sqrt(len(seconds))
        return cls(statistics.fmean(seconds), ci95, statistics.median(seconds), cuts[18])

    def cell(self, *, ci: bool = False) -> str:
        mean = f"{self.mean * 1e3:.3f}" + (f" ± {self.ci95 * 1e3:.3f}" if ci else "")
        return " / ".join([mean, f"{self.p50 * 1e3:.3f}", f"{self.p95 * 1e3:.3f}"])


def own_costs(samples: Samples, name: str, bare: str, clock: str) -> tuple[Stats, Stats]:
    """(per turn with no tool call, per extra tool call), each round's baseline removed."""
    k = TOOL_CALLS
    columns = [[getattr(timing, clock) for timing in samples[key]]
               for key in ((name, 0), (bare, 0), (name, k), (bare, k))]  # fmt: skip
    per_turn, per_call = [], []
    for turn0, bare0, turn_k, bare_k in zip(*columns, strict=True):
        per_turn.append(turn0 - bare0)
        per_call.append(((turn_k - bare_k) - (turn0 - bare0)) / k)
    return Stats.of(per_turn), Stats.of(per_call)


def report(samples: Samples) -> str:
    names = list(dict.fromkeys(name for name, _ in samples))
    bare = names[0]
    walls = {key: Stats.of([t.wall for t in timings]) for key, timings in samples.items()}
    lines = [
        f"Turn time as measured, {len(samples[bare, 0])} turns each, K tool calls a turn "
        "(ms: mean / p50 / p95; the `openai` client and the server included):",
        "",
        f"| configuration | K=0 | K={TOOL_CALLS} |",
        "| --- | ---: | ---: |",
    ]
    lines += [
        f"| {name} | {walls[name, 0].cell()} | {walls[name, TOOL_CALLS].cell()} |" for name in names
    ]
    for clock, title in CLOCKS.items():
        lines += ["", f"The framework's own cost, {title}; the baseline of the same round "
                  "subtracted (ms: mean ± 95% CI / p50 / p95):", ""]  # fmt: skip
        lines += own_cost_table(samples, names, clock)
    lines += [
        "",
        f"Per tool call: the slope between K=0 and K={TOOL_CALLS} of each round; a call is one "
        "more streamed model reply and one tool run. A cost within its ± of zero is noise.",
    ]
    return "\n".join(lines)


def own_cost_table(samples: Samples, names: Sequence[str], clock: str) -> list[str]:
    bare, sdk = names[0], names[1]
    own = {name: own_costs(samples, name, bare, clock) for name in names[1:]}
    sdk_turn, sdk_call = own[sdk]
    lines = [
        "| framework | per turn (K=0) | per tool call | vs Agents SDK: turn, call (means) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, (per_turn, per_call) in own.items():
        ratios = f"{ratio(per_turn, sdk_turn)}, {ratio(per_call, sdk_call)}"
        lines.append(f"| {name} | {per_turn.cell(ci=True)} | {per_call.cell(ci=True)} | {ratios} |")
    return lines


def ratio(cost: Stats, baseline: Stats) -> str:
    """`cost` as a multiple of `baseline`, or ≈ 0 where zero is within its confidence interval."""
    return "≈ 0" if abs(cost.mean) <= cost.ci95 else f"{cost.mean / baseline.mean:.2f}×"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        models = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                  if line.startswith("model name")]  # fmt: skip
        cpu = models[0] if models else cpu
    versions = []
    for package in PACKAGES:
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return (
        f"Machine: {cpu}, {len(os.sched_getaffinity(0))} cores usable of {os.cpu_count()}; "
        f"Python {platform.python_version()}; {', '.join(versions)}; load average {load}."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="timed turns per configuration")
    parser.add_argument("--warmup", type=int, default=WARMUP_TURNS, help="untimed turns first")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    if args.turns < 2:
        parser.error("--turns must be at least 2")
    adopt_orphans()
    agents.set_tracing_disabled(True)
    started = time.perf_counter()
    with ServerProcess() as server, tempfile.TemporaryDirectory() as scratch:
        samples = asyncio.run(measure(server, Path(scratch), args.turns, args.warmup))
    print(report(samples))
    print()
    print(machine(), f"Ran {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
