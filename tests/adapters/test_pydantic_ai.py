"""The pydantic-ai adapter: an `Agent` with `hookgate_capability`, driven by pydantic-ai's
own `FunctionModel`, with the test hooks as real processes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from adapters.conftest import Hooked, Tools, cancel_when_started
from hookgate.adapters.pydantic_ai import hookgate_capability


class Script:
    """A scripted model: its replies in order, and every request it was sent."""

    def __init__(self, *replies: ModelResponse, fail: bool = False) -> None:
        self.replies = list(replies)
        self.seen: list[tuple[list[ModelMessage], AgentInfo]] = []
        self.fail = fail

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append((list(messages), info))
        if self.fail:
            raise ConnectionError("the model is unreachable")
        return self.replies.pop(0)

    def tool_answers(self) -> list[str]:
        """What the model read as tool results, in order."""
        messages, _ = self.seen[-1]
        return [
            part.model_response_str()
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]


def call(name: str, **args: Any) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call-{name}")])


def said(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])


def agent(hooked: Hooked, tools: Tools, script: Script) -> Agent[None, str]:
    return Agent(
        FunctionModel(script),
        tools=[tools.shell, tools.echo, tools.fragile, tools.broken, tools.research],
        capabilities=[hookgate_capability(hooked.file, agents={"research": "researcher"})],
    )


def ask(built: Agent[None, str], question: str, *, use_async: bool) -> str:
    if use_async:
        return asyncio.run(built.run(question)).output
    return built.run_sync(question).output


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_denied_call_never_runs_and_the_model_reads_why(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    script = Script(call("shell", command="rm -rf /"), said("I will not."))
    output = ask(agent(hooked, tools, script), "clean up", use_async=use_async)
    assert tools.calls == []
    [answer] = script.tool_answers()
    assert "[denied by a hook: rm -rf is not allowed by this project" in answer
    assert output == "I will not."
    assert hooked.ends() == [{"prompt": "clean up", "answer": "I will not.", "outcome": "answered"}]


def test_a_rewritten_call_runs_rewritten_and_a_replaced_result_is_what_the_model_reads(
    hooked: Hooked, tools: Tools
) -> None:
    script = Script(call("echo", text="say it lower"), call("echo", text="the SECRET"), said("ok"))
    ask(agent(hooked, tools, script), "echo twice", use_async=False)
    assert tools.calls == [("echo", {"text": "SAY IT LOWER"}), ("echo", {"text": "the SECRET"})]
    assert script.tool_answers() == ["echo: SAY IT LOWER", "[scrubbed by policy]"]


def test_a_guard_that_cannot_run_fails_closed(hooked: Hooked, tools: Tools) -> None:
    script = Script(call("fragile", text="x"), said("done"))
    ask(agent(hooked, tools, script), "try it", use_async=False)
    assert tools.calls == []
    [answer] = script.tool_answers()
    assert "[denied by a hook: hook " in answer
    assert "failed" in answer


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_blocked_question_never_reaches_the_model(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    script = Script(said("should never be said"))
    output = ask(agent(hooked, tools, script), "BLOCK me", use_async=use_async)
    assert script.seen == []
    assert output == "Not answering that."
    assert hooked.ends() == [
        {
            "prompt": "[prompt blocked by a hook: a blocked word]",
            "answer": "Not answering that.",
            "outcome": "blocked",
        }
    ]


def test_a_rewritten_question_and_added_context_are_what_the_model_reads(
    hooked: Hooked, tools: Tools
) -> None:
    script = Script(said("one line"))
    built = agent(hooked, tools, script)
    result = built.run_sync("please rewrite this, with context")
    [(messages, info)] = script.seen
    prompts = [
        p.content
        for m in messages
        for p in getattr(m, "parts", ())
        if isinstance(p, UserPromptPart)
    ]
    assert prompts == ["rewritten by policy this, with context"]
    assert "House rule: answer in one line." in (info.instructions or "")
    kept = [
        p.content
        for m in result.all_messages()
        for p in getattr(m, "parts", ())
        if isinstance(p, UserPromptPart)
    ]
    assert kept == ["rewritten by policy this, with context"]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_post_generation_runs_when_the_model_fails(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    with pytest.raises(ConnectionError):
        ask(agent(hooked, tools, Script(fail=True)), "hello", use_async=use_async)
    assert hooked.ends() == [{"prompt": "hello", "answer": None, "outcome": "error"}]


def test_post_generation_runs_when_a_tool_raises(hooked: Hooked, tools: Tools) -> None:
    script = Script(call("broken", text="x"), said("never"))
    with pytest.raises(RuntimeError, match="the tool broke"):
        ask(agent(hooked, tools, script), "break it", use_async=False)
    assert [end["outcome"] for end in hooked.ends()] == ["error"]


def test_post_generation_runs_when_the_run_is_cancelled(hooked: Hooked, tools: Tools) -> None:
    started = asyncio.Event()

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        started.set()
        await asyncio.sleep(60)
        raise AssertionError("not cancelled")

    built = Agent(FunctionModel(slow), capabilities=[hookgate_capability(hooked.file)])

    asyncio.run(cancel_when_started(built.run("wait"), started))
    assert hooked.ends() == [{"prompt": "wait", "answer": None, "outcome": "cancelled"}]


def test_a_hand_off_runs_between_pre_ask_and_post_ask_inside_its_tool_call_hooks(
    hooked: Hooked, tools: Tools
) -> None:
    script = Script(call("research", question="please rewrite it"), said("done"))
    ask(agent(hooked, tools, script), "find out", use_async=False)
    assert tools.calls == [("research", {"question": "rewritten by policy it"})]
    assert script.tool_answers() == ["researched: rewritten by policy it"]
    assert hooked.hand_offs() == [
        "preToolCall:research", "preAsk:researcher", "subagentStart:researcher",
        "subagentStop:researcher", "postAsk:researcher", "postToolCall:research",
    ]  # fmt: skip


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_refused_hand_off_never_runs_and_the_model_reads_why(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    script = Script(call("research", question="the forbidden one"), said("ok"))
    ask(agent(hooked, tools, script), "find out", use_async=use_async)
    assert tools.calls == []
    [answer] = script.tool_answers()
    assert "[hand-off refused: not a question for that agent]" in answer
    assert "Ask me." in answer
    assert "subagentStart:researcher" not in hooked.hand_offs()


def test_a_replaced_answer_is_what_the_model_reads(hooked: Hooked, tools: Tools) -> None:
    script = Script(call("research", question="the SECRET"), said("ok"))
    ask(agent(hooked, tools, script), "find out", use_async=False)
    assert script.tool_answers() == ["[answer scrubbed by policy]"]


def deploying(hooked: Hooked, tools: Tools, script: Script, **options: Any) -> Agent[None, Any]:
    return Agent(
        FunctionModel(script),
        tools=[tools.deploy],
        capabilities=[hookgate_capability(hooked.file), *options.pop("capabilities", [])],
        **options,
    )


def test_an_ask_with_no_one_to_ask_denies_the_call_unrun(hooked: Hooked, tools: Tools) -> None:
    script = Script(call("deploy", text="now"), said("ok"))
    deploying(hooked, tools, script).run_sync("ship it")
    assert tools.calls == []
    [answer] = script.tool_answers()
    assert "[denied: a hook asked for consent and this program has no approval handler" in answer


def test_an_ask_defers_the_call_for_a_person_who_sees_it_as_it_will_run(
    hooked: Hooked, tools: Tools
) -> None:
    from pydantic_ai import DeferredToolRequests, DeferredToolResults

    script = Script(call("deploy", text="go lower"), said("shipped"))
    built = deploying(hooked, tools, script, output_type=[str, DeferredToolRequests])
    paused = built.run_sync("ship it")
    assert isinstance(paused.output, DeferredToolRequests)
    [pending] = paused.output.approvals
    assert paused.output.metadata[pending.tool_call_id]["arguments"] == {"text": "GO LOWER"}
    assert pending.args_as_dict() == {"text": "GO LOWER"}
    assert tools.calls == []
    approved = DeferredToolResults(approvals={pending.tool_call_id: True})
    done = built.run_sync(message_history=paused.all_messages(), deferred_tool_results=approved)
    assert tools.calls == [("deploy", {"text": "GO LOWER"})]
    assert done.output == "shipped"


def test_pydantic_ais_own_approval_shows_the_person_the_rewritten_call(
    hooked: Hooked, tools: Tools
) -> None:
    """A tool the program marked `requires_approval=True`: pydantic-ai defers it with no
    hook's `ask`, and the person approves the call a hook rewrote, as it will run."""
    from pydantic_ai import DeferredToolRequests, DeferredToolResults, Tool

    script = Script(call("echo", text="say it lower"), said("done"))
    built = Agent(
        FunctionModel(script),
        tools=[Tool(tools.echo, requires_approval=True)],
        output_type=[str, DeferredToolRequests],
        capabilities=[hookgate_capability(hooked.file)],
    )
    paused = built.run_sync("echo it")
    assert isinstance(paused.output, DeferredToolRequests)
    [pending] = paused.output.approvals
    assert pending.args_as_dict() == {"text": "SAY IT LOWER"}
    assert tools.calls == []
    approved = DeferredToolResults(approvals={pending.tool_call_id: True})
    done = built.run_sync(message_history=paused.all_messages(), deferred_tool_results=approved)
    assert tools.calls == [("echo", {"text": "SAY IT LOWER"})]
    assert script.tool_answers() == ["echo: SAY IT LOWER"]
    assert done.output == "done"


def test_a_deferred_call_handler_is_asked_and_its_refusal_keeps_the_call_unrun(
    hooked: Hooked, tools: Tools
) -> None:
    from pydantic_ai import DeferredToolRequests, DeferredToolResults, RunContext, ToolDenied
    from pydantic_ai.capabilities import HandleDeferredToolCalls

    asked: list[Any] = []

    def person(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        asked.extend(requests.metadata[call.tool_call_id] for call in requests.approvals)
        return DeferredToolResults(
            approvals={call.tool_call_id: ToolDenied("not today") for call in requests.approvals}
        )

    script = Script(call("deploy", text="now"), said("ok"))
    handler = HandleDeferredToolCalls(handler=person)
    deploying(hooked, tools, script, capabilities=[handler]).run_sync("ship it")
    assert [shown["arguments"] for shown in asked] == [{"text": "now"}]
    assert tools.calls == []
    assert script.tool_answers() == ["not today"]
