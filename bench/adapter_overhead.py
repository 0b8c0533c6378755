"""What hookgate's adapters add per tool call, against each bare framework.

Every framework plays the same in-process scripted conversation: K calls of a no-op
`echo` tool, each in its own model reply, then an answer (the framework's own fake
model; the Claude Agent SDK's scripted CLI of the tests on its transport). Contenders:
the bare framework, then its hookgate adapter with no hooks, with one Python-callable
hook on preToolCall and postToolCall, with one `command: "true"` hook on both, and with
a realistic hook on both: a Python script (`POLICY_SCRIPT`) that reads the event, checks
the call against a few patterns and answers in JSON, as a project's policy hook would.
The per-call cost is (median turn - the bare framework's median turn) / K, all measured
in the same run, round by round in a rotating order, both as wall-clock time and as CPU
time of this process (steadier on a shared machine: neither a neighbour nor a hook's own
process inflates it). Prints Markdown tables.

    .venv/bin/python bench/adapter_overhead.py [--rounds N] [--calls K] [--only NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import itertools
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hookgate.hooks import HookEngine, callable_hook, parse_hooks
from hookgate.hooks.files.yamlfile import Where

# The scripted Claude CLI lives with the tests. Appended, so it shadows no installed package.
TESTS = Path(__file__).resolve().parent.parent / "tests"
if str(TESTS) not in sys.path:
    sys.path.append(str(TESTS))

WARMUP_ROUNDS = 3  # not counted: lazy imports, first compilations, caches
PACKAGES = ("langchain", "langgraph", "pydantic-ai-slim", "openai-agents", "claude-agent-sdk")
Turn = Callable[[], int]
"""Plays one conversation; returns how many times the echo tool ran."""


def echo(text: str) -> str:
    """Echo the text."""
    return text


# Each framework: make(engine or None, K) -> a Turn ready to play (set-up not timed).


def langchain_turn(engine: HookEngine | None, calls: int) -> Turn:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from hookgate.adapters.langchain import hookgate_middleware

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Model:  # type: ignore[override]
            return self

    replies: list[AIMessage | str] = [
        AIMessage(
            content="", tool_calls=[{"name": "echo", "args": {"text": "ping"}, "id": f"c{i}"}]
        )
        for i in range(calls)
    ]
    model = Model(messages=iter([*replies, "done"]))
    middleware = [hookgate_middleware(engine)] if engine else []
    agent = create_agent(model, [echo], middleware=middleware)

    def turn() -> int:
        state = agent.invoke({"messages": [{"role": "user", "content": "echo"}]})
        return sum(1 for m in state["messages"] if m.type == "tool")

    return turn


def pydantic_ai_turn(engine: HookEngine | None, calls: int) -> Turn:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from hookgate.adapters.pydantic_ai import hookgate_capability

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        made = (len(messages) - 1) // 2
        if made < calls:
            return ModelResponse(
                parts=[ToolCallPart("echo", {"text": "ping"}, tool_call_id=f"c{made}")]
            )
        return ModelResponse(parts=[TextPart("done")])

    capabilities = [hookgate_capability(engine)] if engine else []
    agent = Agent(FunctionModel(script), tools=[echo], capabilities=capabilities)

    def turn() -> int:
        result = agent.run_sync("echo")
        return sum(
            1 for m in result.all_messages() for p in m.parts if p.part_kind == "tool-return"
        )

    return turn


def openai_agents_turn(engine: HookEngine | None, calls: int) -> Turn:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message, function_call

    from hookgate.adapters.openai_agents import hookgate_agent

    set_tracing_disabled(True)
    ids = itertools.count()
    model = ScriptedModel()
    agent = Agent(name="bench", model=model, tools=[function_tool(echo)])
    guarded = hookgate_agent(agent, engine) if engine else None

    def turn() -> int:
        model.extend(
            [function_call("echo", {"text": "ping"}, call_id=f"c{next(ids)}")] for _ in range(calls)
        )
        model.enqueue([assistant_message("done")])
        result = guarded.run_sync("echo") if guarded else Runner.run_sync(agent, "echo")
        return sum(1 for item in result.new_items if item.type == "tool_call_output_item")

    return turn


def claude_agent_sdk_turn(engine: HookEngine | None, calls: int) -> Turn:
    from claude_agent_sdk import ClaudeAgentOptions, query

    from adapters.claude_cli import ScriptedCLI
    from hookgate.adapters.claude_agent_sdk import hookgate_hooks

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hooks = hookgate_hooks(engine) if engine else None
    ran = 0

    def run_echo(tool_input: dict[str, Any]) -> dict[str, Any]:
        nonlocal ran
        ran += 1
        return {"content": [{"type": "text", "text": tool_input["text"]}]}

    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            for _ in range(calls):
                await cli.tool("mcp__bench__echo", {"text": "ping"}, run_echo)
            await cli.finish("done")

    async def play() -> None:
        options = ClaudeAgentOptions(hooks=hooks)  # type: ignore[arg-type]
        cli = ScriptedCLI(script, os.getcwd())
        async for _ in query(prompt="echo", options=options, transport=cli):
            pass

    def turn() -> int:
        nonlocal ran
        ran = 0
        asyncio.run(play())
        return ran

    return turn


FRAMEWORKS: dict[str, Callable[[HookEngine | None, int], Turn]] = {
    "LangChain (`create_agent`, sync)": langchain_turn,
    "pydantic-ai (`run_sync`)": pydantic_ai_turn,
    "OpenAI Agents SDK (`run_sync`)": openai_agents_turn,
    "Claude Agent SDK (scripted CLI)": claude_agent_sdk_turn,
}


POLICY_SCRIPT = """\
import json, re, sys
event = json.load(sys.stdin)
text = json.dumps(event.get("arguments") or event.get("result") or {})
risky = re.search(r"rm -rf|curl .*\\| *sh|AKIA[0-9A-Z]{16}", text)
json.dump({"action": "block", "reason": "risky"} if risky else {}, sys.stdout)
"""
"""A project's policy hook, as most are written: a Python script on both tool events."""


def engines(workdir: Path) -> dict[str, HookEngine | None]:
    def allow(event: dict[str, Any]) -> None:
        return None

    python = [callable_hook(event, allow) for event in ("preToolCall", "postToolCall")]
    process = parse_hooks(
        {"preToolCall": [{"command": "true"}], "postToolCall": [{"command": "true"}]},
        Where("bench"),
        base_dir=workdir,
    )
    script = workdir / "policy.py"
    script.write_text(POLICY_SCRIPT)
    command = f"{sys.executable} {script}"
    realistic = parse_hooks(
        {"preToolCall": [{"command": command}], "postToolCall": [{"command": command}]},
        Where("bench"),
        base_dir=workdir,
    )
    return {
        "bare framework (baseline)": None,
        "hookgate adapter, no hooks": HookEngine(None, session_id="bench"),
        "hookgate adapter, a Python hook on both": HookEngine(
            None, session_id="bench", extra=python
        ),
        'hookgate adapter, `command: "true"` on both': HookEngine(process, session_id="bench"),
        "hookgate adapter, a Python script hook on both": HookEngine(realistic, session_id="bench"),
    }


Samples = dict[str, list[tuple[float, float]]]
"""Per contender: (wall, CPU) seconds of each counted turn."""


def measure(make: Callable[[HookEngine | None, int], Turn], rounds: int, calls: int) -> Samples:
    with tempfile.TemporaryDirectory() as workdir:
        contenders = engines(Path(workdir))
        times: Samples = {name: [] for name in contenders}
        names = list(contenders)
        for index in range(WARMUP_ROUNDS + rounds):
            order = names[index % len(names) :] + names[: index % len(names)]
            for name in order:
                turn = make(contenders[name], calls)
                gc.collect()
                started, cpu = time.perf_counter(), time.process_time()
                ran = turn()
                elapsed = (time.perf_counter() - started, time.process_time() - cpu)
                if ran != calls:
                    raise SystemExit(f"{name}: the echo tool ran {ran} times, not {calls}")
                if index >= WARMUP_ROUNDS:
                    times[name].append(elapsed)
    return times


def table(title: str, times: Samples, calls: int) -> str:
    base = [statistics.median(s[i] for s in times["bare framework (baseline)"]) for i in (0, 1)]
    lines = [f"### {title}", "",
             f"| contender | turn, {calls} calls: wall (median) | CPU (median) "
             "| added per tool call: wall | CPU |",
             "| --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for name, samples in times.items():
        wall, cpu = (statistics.median(s[i] for s in samples) for i in (0, 1))
        added = ["", ""]
        if not name.startswith("bare"):
            added = [
                f"{(value - b) / calls * 1e3:+.2f} ms"
                for value, b in zip((wall, cpu), base, strict=True)
            ]
        lines.append(
            f"| {name} | {wall * 1e3:.1f} ms | {cpu * 1e3:.1f} ms | {added[0]} | {added[1]} |"
        )
    return "\n".join(lines)


def machine() -> str:
    versions = []
    for package in PACKAGES:
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    cores = os.cpu_count()
    return (f"{platform.processor() or platform.machine()}, {cores} cores, Linux {platform.release()}, "
            f"Python {platform.python_version()}; {', '.join(versions)}; load average {load}.")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=8)  # the Agents SDK allows 10 turns
    parser.add_argument("--only", help="run the frameworks whose name holds this text")
    options = parser.parse_args()
    for title, make in FRAMEWORKS.items():
        if options.only and options.only.lower() not in title.lower():
            continue
        print(
            table(title, measure(make, options.rounds, options.calls), options.calls),
            end="\n\n",
            flush=True,
        )
    print(machine())


if __name__ == "__main__":
    main()
