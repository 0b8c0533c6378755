"""The OpenAI Agents SDK adapter: `hookgate_agent(agent, ...)`, driven by the SDK's own
`ScriptedModel`, with the test hooks as real processes."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, WebSearchTool, function_tool, set_tracing_disabled
from agents.run_config import CallModelData, ModelInputData
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

from adapters.conftest import Hooked, Tools, cancel_when_started
from hookgate.adapters.openai_agents import HookgateAgent, UnscreenedTools, hookgate_agent

CALL_IDS = itertools.count()

set_tracing_disabled(True)  # offline: no trace export


def call(name: str, **args: Any) -> list[Any]:
    return [function_call(name, args, call_id=f"call-{next(CALL_IDS)}")]


def said(text: str) -> list[Any]:
    return [assistant_message(text)]


def agent(hooked: Hooked, tools: Tools, model: ScriptedModel) -> HookgateAgent:
    functions = [tools.shell, tools.echo, tools.fragile]
    plain = Agent(name="helper", model=model, tools=[function_tool(f) for f in functions])
    return hookgate_agent(plain, hooked.file)


def tool_answers(model: ScriptedModel) -> list[str]:
    """What the model read as tool results, in order."""
    last = model.last_call
    assert last is not None
    return [
        str(item["output"])
        for item in last.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def ask(guarded: HookgateAgent, question: str, *, use_async: bool, **options: Any) -> Any:
    if use_async:
        return asyncio.run(guarded.run(question, **options))
    return guarded.run_sync(question, **options)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_denied_call_never_runs_and_the_model_reads_why(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    model = ScriptedModel([call("shell", command="rm -rf /"), said("I will not.")])
    result = ask(agent(hooked, tools, model), "clean up", use_async=use_async)
    assert tools.calls == []
    [answer] = tool_answers(model)
    assert answer.startswith("[denied by a hook: rm -rf is not allowed by this project")
    assert result.final_output == "I will not."
    assert hooked.ends() == [{"prompt": "clean up", "answer": "I will not.", "outcome": "answered"}]


def test_a_rewritten_call_runs_rewritten_and_a_replaced_result_is_what_the_model_reads(
    hooked: Hooked, tools: Tools
) -> None:
    model = ScriptedModel(
        [call("echo", text="say it lower"), call("echo", text="the SECRET"), said("ok")]
    )
    ask(agent(hooked, tools, model), "echo twice", use_async=False)
    assert tools.calls == [("echo", {"text": "SAY IT LOWER"}), ("echo", {"text": "the SECRET"})]
    assert tool_answers(model) == ["echo: SAY IT LOWER", "[scrubbed by policy]"]


def test_a_guard_that_cannot_run_fails_closed(hooked: Hooked, tools: Tools) -> None:
    model = ScriptedModel([call("fragile", text="x"), said("done")])
    ask(agent(hooked, tools, model), "try it", use_async=False)
    assert tools.calls == []
    [answer] = tool_answers(model)
    assert answer.startswith("[denied by a hook: hook ")
    assert "failed" in answer


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_blocked_question_never_reaches_the_model(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    model = ScriptedModel([said("should never be said")])
    result = ask(agent(hooked, tools, model), "BLOCK me", use_async=use_async)
    assert model.calls == ()
    assert result.final_output == "Not answering that."
    assert "BLOCK me" not in str(result.to_input_list())
    assert hooked.ends()[0]["outcome"] == "blocked"


def test_a_rewritten_question_and_added_context_are_what_the_model_reads(
    hooked: Hooked, tools: Tools
) -> None:
    model = ScriptedModel([said("one line")])
    seen: list[str | None] = []

    def theirs(data: CallModelData[Any]) -> ModelInputData:
        seen.append(data.model_data.instructions)  # the caller's own filter still runs
        return data.model_data

    config = RunConfig(call_model_input_filter=theirs)
    ask(
        agent(hooked, tools, model),
        "please rewrite this, with context",
        use_async=False,
        run_config=config,
    )
    [sent] = model.calls
    assert sent.system_instructions == "House rule: answer in one line."
    assert sent.input[-1]["content"] == "rewritten by policy this, with context"
    assert seen == [None]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_post_generation_runs_when_the_model_fails(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    model = ScriptedModel([ConnectionError("the model is unreachable")])
    with pytest.raises(ConnectionError):
        ask(agent(hooked, tools, model), "hello", use_async=use_async)
    assert hooked.ends() == [{"prompt": "hello", "answer": None, "outcome": "error"}]


def test_hosted_tools_are_named_at_set_up_as_unscreened(hooked: Hooked) -> None:
    plain = Agent(name="searcher", tools=[WebSearchTool()])
    with pytest.warns(UnscreenedTools, match="searcher: WebSearchTool"):
        guarded = hookgate_agent(plain, hooked.file)
    assert guarded.unscreened == ["searcher: WebSearchTool web_search"]


def test_the_tools_of_an_agent_handed_off_to_are_screened_too(hooked: Hooked, tools: Tools) -> None:
    model = ScriptedModel(
        [
            call("transfer_to_cleaner"),
            call("shell", command="rm -rf /"),
            said("I will not."),
        ]
    )
    cleaner = Agent(name="cleaner", model=model, tools=[function_tool(tools.shell)])
    front = Agent(name="front", model=model, handoffs=[cleaner])
    result = hookgate_agent(front, hooked.file).run_sync("clean up")
    assert tools.calls == []
    assert result.last_agent.name == "cleaner"
    assert tool_answers(model)[-1].startswith("[denied by a hook: rm -rf")


def test_post_generation_runs_when_the_run_is_cancelled(hooked: Hooked, tools: Tools) -> None:
    started = asyncio.Event()

    async def slow(call: Any) -> Any:
        started.set()
        await asyncio.sleep(60)
        raise AssertionError("not cancelled")

    guarded = agent(hooked, tools, ScriptedModel([ModelStep.respond(slow)]))

    asyncio.run(cancel_when_started(guarded.run("wait"), started))
    assert hooked.ends() == [{"prompt": "wait", "answer": None, "outcome": "cancelled"}]


def asking(
    hooked: Hooked, tools: Tools, model: ScriptedModel, answer: str = "researched"
) -> HookgateAgent:
    """An agent whose `research` tool is another agent, made by `Agent.as_tool()`."""
    researcher = Agent(name="researcher", model=ScriptedModel([said(answer)]))
    tool = researcher.as_tool(tool_name="research", tool_description="ask the researcher")
    return hookgate_agent(Agent(name="helper", model=model, tools=[tool]), hooked.file)


def test_an_agent_tool_runs_between_pre_ask_and_post_ask_inside_its_tool_call_hooks(
    hooked: Hooked, tools: Tools
) -> None:
    model = ScriptedModel([call("research", input="please rewrite it"), said("done")])
    guarded = asking(hooked, tools, model)
    ask(guarded, "find out", use_async=False)
    assert tool_answers(model) == ["researched"]
    researcher = guarded.agent.tools[0]._agent_instance.model  # type: ignore[attr-defined]
    [sent] = [item for item in researcher.last_call.input if item.get("role") == "user"]
    assert sent["content"] == "rewritten by policy it"
    assert hooked.hand_offs() == [
        "preToolCall:research", "preAsk:researcher", "subagentStart:researcher",
        "subagentStop:researcher", "postAsk:researcher", "postToolCall:research",
    ]  # fmt: skip


def test_a_refused_agent_tool_never_runs_and_the_model_reads_why(
    hooked: Hooked, tools: Tools
) -> None:
    model = ScriptedModel([call("research", input="the forbidden one"), said("ok")])
    guarded = asking(hooked, tools, model)
    ask(guarded, "find out", use_async=False)
    assert tool_answers(model) == ["[hand-off refused: not a question for that agent]\nAsk me."]
    assert guarded.agent.tools[0]._agent_instance.model.last_call is None  # type: ignore[attr-defined]


def test_a_replaced_agent_answer_is_what_the_model_reads(hooked: Hooked, tools: Tools) -> None:
    model = ScriptedModel([call("research", input="the SECRET"), said("ok")])
    ask(asking(hooked, tools, model, "the SECRET is out"), "find out", use_async=False)
    assert tool_answers(model) == ["[answer scrubbed by policy]"]


def test_the_tools_of_an_agent_tool_are_named_at_set_up_as_unscreened(
    hooked: Hooked, tools: Tools
) -> None:
    researcher = Agent(name="researcher", tools=[function_tool(tools.shell)])
    tool = researcher.as_tool(tool_name="research", tool_description="ask the researcher")
    with pytest.warns(UnscreenedTools, match="tools of researcher"):
        guarded = hookgate_agent(Agent(name="helper", tools=[tool]), hooked.file)
    assert guarded.unscreened == ["helper: research: tools of researcher"]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_handoff_is_observed_as_subagent_start_and_stop(hooked: Hooked, use_async: bool) -> None:
    """A `Handoff` gives the conversation away, so no preAsk can refuse it; the hooks
    still see the other agent start and, when the run ends, stop with its answer."""
    model = ScriptedModel([call("transfer_to_cleaner"), said("all clean")])
    cleaner = Agent(name="cleaner", model=model)
    front = Agent(name="front", model=model, handoffs=[cleaner])

    result = ask(hookgate_agent(front, hooked.file), "clean up", use_async=use_async)

    assert result.last_agent.name == "cleaner"
    assert result.final_output == "all clean"
    assert hooked.hand_offs() == ["subagentStart:cleaner", "subagentStop:cleaner"]


def deploying(hooked: Hooked, tools: Tools, model: ScriptedModel, **options: Any) -> HookgateAgent:
    plain = Agent(name="helper", model=model, tools=[function_tool(tools.deploy)])
    return hookgate_agent(plain, hooked.file, **options)


def test_an_ask_with_no_one_to_ask_denies_the_call_unrun(hooked: Hooked, tools: Tools) -> None:
    model = ScriptedModel([call("deploy", text="now"), said("ok")])
    result = deploying(hooked, tools, model).run_sync("ship it")
    assert tools.calls == []
    assert result.interruptions == []
    assert tool_answers(model) == [
        "[denied: a hook asked for consent and this program has no approval handler to ask anyone]"
    ]


@pytest.mark.parametrize("approve", [True, False], ids=["approved", "rejected"])
def test_an_ask_interrupts_the_run_for_a_person_who_sees_the_call_as_it_will_run(
    hooked: Hooked, tools: Tools, approve: bool
) -> None:
    model = ScriptedModel([call("deploy", text="go lower"), said("done")])
    guarded = deploying(hooked, tools, model, approvals=True)
    paused = guarded.run_sync("ship it")
    [pending] = paused.interruptions
    assert (pending.tool_name, json.loads(pending.arguments)) == ("deploy", {"text": "GO LOWER"})
    assert guarded.as_run(pending) == {"text": "GO LOWER"}
    assert tools.calls == []
    state = paused.to_state()
    if approve:
        state.approve(pending)
    else:
        state.reject(pending, rejection_message="not on a Friday")
    done = guarded.run_sync(state)
    assert done.final_output == "done"
    if approve:
        assert tools.calls == [("deploy", {"text": "GO LOWER"})]
    else:
        assert tools.calls == []
        assert tool_answers(model) == ["not on a Friday"]
    assert [end["prompt"] for end in hooked.ends()][-1] == "ship it"


@pytest.mark.parametrize("round_trip", [False, True], ids=["state", "state-as-json"])
def test_the_sdks_own_approval_shows_the_person_the_rewritten_call(
    hooked: Hooked, tools: Tools, round_trip: bool
) -> None:
    """A tool the program marked `needs_approval=True`: the SDK asks, with no hook's
    `ask`, and the person approves the call a hook rewrote, as it will run."""
    from agents import RunState

    model = ScriptedModel([call("echo", text="say it lower"), said("done")])
    echo = function_tool(tools.echo, needs_approval=True)
    guarded = hookgate_agent(Agent(name="helper", model=model, tools=[echo]), hooked.file)
    paused = guarded.run_sync("echo it")
    [pending] = paused.interruptions
    assert json.loads(pending.arguments or "") == {"text": "SAY IT LOWER"}
    state = paused.to_state()
    if round_trip:
        state = asyncio.run(RunState.from_json(guarded.agent, state.to_json()))
        [pending] = state.get_interruptions()
    state.approve(pending)
    done = guarded.run_sync(state)
    assert done.final_output == "done"
    assert tools.calls == [("echo", {"text": "SAY IT LOWER"})]
    assert tool_answers(model) == ["echo: SAY IT LOWER"]


def test_a_failed_tool_reaches_post_tool_call_as_a_failure(hooked: Hooked, tools: Tools) -> None:
    model = ScriptedModel([call("broken", text="x"), said("it broke")])
    plain = Agent(name="helper", model=model, tools=[function_tool(tools.broken)])
    hookgate_agent(plain, hooked.file).run_sync("break it")
    [result] = hooked.results()
    assert result == {"content": "RuntimeError: the tool broke", "is_error": True}
    [answer] = tool_answers(model)
    assert answer.startswith("An error occurred while running the tool")  # the SDK's text


MCP_SERVER_TIME = Path(sys.executable).with_name("mcp-server-time")


@pytest.mark.skipif(not MCP_SERVER_TIME.exists(), reason="mcp-server-time is not installed")
def test_an_mcp_servers_tools_are_screened(hooked: Hooked) -> None:
    from agents.mcp import MCPServerStdio

    deny = hooked.dir / "deny.py"
    deny.write_text('print(\'{"action": "block", "reason": "no clocks here"}\')\n')
    hooked.file.write_text(
        "hooks:\n  preToolCall:\n    - matcher: ^get_current_time$\n"
        f"      command: {sys.executable} {deny}\n"
    )
    model = ScriptedModel([call("get_current_time", timezone="UTC"), said("no time")])

    async def run() -> None:
        server = MCPServerStdio({"command": str(MCP_SERVER_TIME)}, name="clock")
        async with server:
            plain = Agent(name="helper", model=model, mcp_servers=[server])
            guarded = hookgate_agent(plain, hooked.file)
            assert guarded.unscreened == []
            await guarded.run("what time is it")

    asyncio.run(run())
    assert tool_answers(model) == ["[denied by a hook: no clocks here]"]


def test_a_model_named_through_the_run_configs_provider_is_screened_too(
    hooked: Hooked, tools: Tools
) -> None:
    """The model by name, resolved by the run config's provider: OpenAI's chat
    completions client against a real server on loopback."""
    from agents import OpenAIProvider

    from support.chat_server import ChatServer, ServedReply, ServedToolCall

    with ChatServer() as server:
        server.queue(
            ServedReply(tool_calls=[ServedToolCall("deploy", {"text": "go lower"})]),
            ServedReply("shipped"),
        )
        provider = OpenAIProvider(base_url=server.url, api_key="test", use_responses=False)
        plain = Agent(name="helper", model="served", tools=[function_tool(tools.deploy)])
        guarded = hookgate_agent(plain, hooked.file, approvals=True)
        config = RunConfig(model_provider=provider)
        paused = guarded.run_sync("ship it", run_config=config)
        [pending] = paused.interruptions
        assert json.loads(pending.arguments or "") == {"text": "GO LOWER"}
        state = paused.to_state()
        state.approve(pending)
        assert guarded.run_sync(state, run_config=config).final_output == "shipped"
        assert tools.calls == [("deploy", {"text": "GO LOWER"})]
        assert '\\"GO LOWER\\"' in server.sent_text()  # the history keeps the call as it ran
