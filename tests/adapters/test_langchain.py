"""The LangChain adapter: a `create_agent` agent with `hookgate_middleware`, driven by
LangChain's own fake chat model, with the test hooks as real processes."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import StructuredTool

from adapters.conftest import Hooked, Tools, cancel_when_started
from hookgate.adapters.langchain import hookgate_middleware


class ScriptedChat(GenericFakeChatModel):
    """LangChain's fake model, recording what it was sent; tools bind to itself."""

    seen: list[list[BaseMessage]] = []  # noqa: RUF012 (a pydantic field, copied per instance)
    fail: bool = False
    hang: asyncio.Event | None = None
    """Set: the model signals it and never answers (until cancelled)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        if self.fail:
            raise ConnectionError("the model is unreachable")
        return super()._generate(messages, *args, **kwargs)

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        if self.hang is not None:
            self.hang.set()
            await asyncio.sleep(60)
        return await super()._agenerate(messages, *args, **kwargs)


HAND_OFFS = {"research": "researcher"}
"""The tool that runs another agent, declared to the adapter."""


def call(name: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def agent(
    hooked: Hooked,
    tools: Tools,
    *replies: AIMessage | str,
    fail: bool = False,
    hand_offs: Mapping[str, str] = HAND_OFFS,
    middleware: Sequence[Any] = (),
    checkpointer: Any = None,
) -> Any:
    model = ScriptedChat(messages=iter(replies), fail=fail)
    functions = [tools.shell, tools.echo, tools.fragile, tools.broken, tools.research]
    functions.append(tools.deploy)
    wrapped = [
        StructuredTool.from_function(f, description=f"the {f.__name__} tool") for f in functions
    ]
    built = create_agent(
        model,
        wrapped,
        middleware=[hookgate_middleware(hooked.file, agents=hand_offs), *middleware],
        checkpointer=checkpointer,
    )
    built.model = model  # for the assertions below
    return built


def tool_answers(model: ScriptedChat) -> list[str]:
    """What the model read as tool results, in order."""
    return [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]


def ask(built: Any, question: str, *, use_async: bool) -> dict[str, Any]:
    request = {"messages": [{"role": "user", "content": question}]}
    if use_async:
        return asyncio.run(built.ainvoke(request))  # type: ignore[no-any-return]
    return built.invoke(request)  # type: ignore[no-any-return]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_denied_call_never_runs_and_the_model_reads_why(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    built = agent(hooked, tools, call("shell", command="rm -rf /"), "I will not.")
    state = ask(built, "clean up", use_async=use_async)
    assert tools.calls == []
    [answer] = tool_answers(built.model)
    assert answer.startswith("[denied by a hook: rm -rf is not allowed by this project")
    assert state["messages"][-1].text == "I will not."
    assert hooked.ends() == [{"prompt": "clean up", "answer": "I will not.", "outcome": "answered"}]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_rewritten_call_runs_rewritten_and_a_replaced_result_is_what_the_model_reads(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    built = agent(
        hooked, tools, call("echo", text="say it lower"), call("echo", text="the SECRET"), "ok"
    )
    ask(built, "echo twice", use_async=use_async)
    assert tools.calls == [("echo", {"text": "SAY IT LOWER"}), ("echo", {"text": "the SECRET"})]
    assert tool_answers(built.model) == ["echo: SAY IT LOWER", "[scrubbed by policy]"]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_guard_that_cannot_run_fails_closed(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    built = agent(hooked, tools, call("fragile", text="x"), "done")
    ask(built, "try it", use_async=use_async)
    assert tools.calls == []
    [answer] = tool_answers(built.model)
    assert answer.startswith("[denied by a hook: hook ")
    assert "failed" in answer


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_blocked_question_never_reaches_the_model(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    built = agent(hooked, tools, "should never be said")
    state = ask(built, "BLOCK me", use_async=use_async)
    assert built.model.seen == []
    texts = [m.text for m in state["messages"]]
    assert texts == ["[prompt blocked by a hook: a blocked word]", "Not answering that."]
    assert hooked.ends()[0]["outcome"] == "blocked"
    assert "BLOCK me" not in str(hooked.ends())


def test_a_rewritten_question_and_added_context_are_what_the_model_reads(
    hooked: Hooked, tools: Tools
) -> None:
    built = agent(hooked, tools, "one line")
    ask(built, "please rewrite this, with context", use_async=False)
    [sent] = built.model.seen
    assert sent[0].type == "system"
    assert sent[0].text == "House rule: answer in one line."
    assert sent[-1].text == "rewritten by policy this, with context"


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_post_generation_runs_when_the_model_fails(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    built = agent(hooked, tools, fail=True)
    with pytest.raises(ConnectionError):
        ask(built, "hello", use_async=use_async)
    assert hooked.ends() == [{"prompt": "hello", "answer": None, "outcome": "error"}]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_post_generation_runs_when_a_tool_raises(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    built = agent(hooked, tools, call("broken", text="x"), "never")
    with pytest.raises(RuntimeError, match="the tool broke"):
        ask(built, "break it", use_async=use_async)
    assert [end["outcome"] for end in hooked.ends()] == ["error"]


def test_an_interrupt_pauses_the_run_without_ending_it(hooked: Hooked, tools: Tools) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import interrupt

    def approve(text: str) -> str:
        """Ask a person first."""
        return str(interrupt(f"approve {text}?"))

    model = ScriptedChat(messages=iter([call("approve", text="x"), "done"]))
    built = create_agent(
        model,
        [StructuredTool.from_function(approve)],
        middleware=[hookgate_middleware(hooked.file)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "1"}}
    state = built.invoke({"messages": [{"role": "user", "content": "go"}]}, config)
    assert state["__interrupt__"][0].value == "approve x?"
    assert hooked.ends() == []  # paused, not over


def test_post_generation_runs_when_the_run_is_cancelled(hooked: Hooked, tools: Tools) -> None:
    started = asyncio.Event()
    model = ScriptedChat(messages=iter(["never"]), hang=started)
    built = create_agent(model, [], middleware=[hookgate_middleware(hooked.file)])
    question = {"messages": [{"role": "user", "content": "wait"}]}
    asyncio.run(cancel_when_started(built.ainvoke(question), started))
    assert hooked.ends() == [{"prompt": "wait", "answer": None, "outcome": "cancelled"}]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_hand_off_runs_between_pre_ask_and_post_ask_inside_its_tool_call_hooks(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    built = agent(hooked, tools, call("research", question="please rewrite it"), "done")
    ask(built, "find out", use_async=use_async)
    assert tools.calls == [("research", {"question": "rewritten by policy it"})]
    assert tool_answers(built.model) == ["researched: rewritten by policy it"]
    assert hooked.hand_offs() == [
        "preToolCall:research", "preAsk:researcher", "subagentStart:researcher",
        "subagentStop:researcher", "postAsk:researcher", "postToolCall:research",
    ]  # fmt: skip


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_refused_hand_off_never_runs_and_the_model_reads_why(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    built = agent(hooked, tools, call("research", question="the forbidden one"), "ok")
    ask(built, "find out", use_async=use_async)
    assert tools.calls == []
    assert tool_answers(built.model) == [
        "[hand-off refused: not a question for that agent]\nAsk me."
    ]
    assert "subagentStart:researcher" not in hooked.hand_offs()


def test_context_post_ask_adds_follows_the_answer(hooked: Hooked, tools: Tools) -> None:
    built = agent(hooked, tools, call("research", question="with context"), "ok")
    ask(built, "find out", use_async=False)
    assert tool_answers(built.model) == [
        "researched: with context\n\n[hook notes]\nChecked by policy."
    ]


def test_a_replaced_answer_is_what_the_model_reads(hooked: Hooked, tools: Tools) -> None:
    built = agent(hooked, tools, call("research", question="the SECRET"), "ok")
    ask(built, "find out", use_async=False)
    assert tool_answers(built.model) == ["[answer scrubbed by policy]"]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_hand_off_that_raises_still_ends_with_subagent_stop(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    built = agent(hooked, tools, call("broken", text="x"), "never", hand_offs={"broken": "fixer"})
    with pytest.raises(RuntimeError, match="the tool broke"):
        ask(built, "break it", use_async=use_async)
    assert hooked.hand_offs() == ["preAsk:fixer", "subagentStart:fixer", "subagentStop:fixer"]
    assert [end["outcome"] for end in hooked.ends()] == ["error"]


def test_a_rewrite_with_no_question_argument_to_hold_it_refuses_the_hand_off(
    hooked: Hooked, tools: Tools
) -> None:
    def brief(topic: str, audience: str) -> str:
        tools.calls.append(("brief", {"topic": topic, "audience": audience}))
        return "briefed"

    model = ScriptedChat(
        messages=iter([call("brief", topic="please rewrite", audience="me"), "ok"])
    )
    tool = StructuredTool.from_function(brief, description="ask the briefer")
    middleware = hookgate_middleware(hooked.file, agents={"brief": "briefer"})
    create_agent(model, [tool], middleware=[middleware]).invoke(
        {"messages": [{"role": "user", "content": "brief me"}]}
    )
    assert tools.calls == []
    assert tool_answers(model) == [
        "[hand-off refused: a hook rewrote the question, and the tool has no question "
        "argument to hold it]"
    ]


THREAD = {"configurable": {"thread_id": "1"}}


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_an_ask_with_no_one_to_ask_denies_the_call_unrun(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    built = agent(hooked, tools, call("deploy", text="now"), "ok")
    ask(built, "ship it", use_async=use_async)  # no checkpointer: nothing can resume
    assert tools.calls == []
    assert tool_answers(built.model) == [
        "[denied: a hook asked for consent and this program has no approval handler to ask anyone]"
    ]


def interrupted(built: Any, value: Any, *, use_async: bool) -> Any:
    if use_async:
        return asyncio.run(built.ainvoke(value, THREAD))
    return built.invoke(value, THREAD)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_an_ask_pauses_the_run_and_the_person_approves_the_call_as_it_will_run(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    built = agent(
        hooked, tools, call("deploy", text="go lower"), "shipped", checkpointer=InMemorySaver()
    )
    question = {"messages": [{"role": "user", "content": "ship it"}]}
    state = interrupted(built, question, use_async=use_async)
    [request] = state["__interrupt__"][0].value["action_requests"]
    assert (request["name"], request["args"]) == ("deploy", {"text": "GO LOWER"})
    assert tools.calls == []
    assert hooked.ends() == []  # paused, not over
    resume = Command(resume={"decisions": [{"type": "approve"}]})
    state = interrupted(built, resume, use_async=use_async)
    assert tools.calls == [("deploy", {"text": "GO LOWER"})]
    assert state["messages"][-1].text == "shipped"
    assert [end["outcome"] for end in hooked.ends()] == ["answered"]


def test_a_call_the_person_rejects_never_runs_and_the_model_reads_why(
    hooked: Hooked, tools: Tools
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    built = agent(hooked, tools, call("deploy", text="now"), "ok", checkpointer=InMemorySaver())
    built.invoke({"messages": [{"role": "user", "content": "ship it"}]}, THREAD)
    reject = {"decisions": [{"type": "reject", "message": "not on a Friday"}]}
    built.invoke(Command(resume=reject), THREAD)
    assert tools.calls == []
    assert tool_answers(built.model) == ["[denied by the user: not on a Friday]"]


@pytest.mark.parametrize("first", [True, False], ids=["hookgate-first", "hookgate-last"])
def test_langchains_own_approval_shows_the_person_the_rewritten_call(
    hooked: Hooked, tools: Tools, first: bool
) -> None:
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    model = ScriptedChat(messages=iter([call("echo", text="say it lower"), "ok"]))
    approval = HumanInTheLoopMiddleware(interrupt_on={"echo": True})
    hookgate = hookgate_middleware(hooked.file)
    built = create_agent(
        model,
        [StructuredTool.from_function(tools.echo, description="echo")],
        middleware=[hookgate, approval] if first else [approval, hookgate],
        checkpointer=InMemorySaver(),
    )
    state = built.invoke({"messages": [{"role": "user", "content": "echo"}]}, THREAD)
    [request] = state["__interrupt__"][0].value["action_requests"]
    assert request["args"] == {"text": "SAY IT LOWER"}
    built.invoke(Command(resume={"decisions": [{"type": "approve"}]}), THREAD)
    assert tools.calls == [("echo", {"text": "SAY IT LOWER"})]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_post_generation_is_recorded_once_when_parallel_tools_raise(
    hooked: Hooked, tools: Tools, use_async: bool
) -> None:
    both = AIMessage(
        content="",
        tool_calls=[
            {"name": "broken", "args": {"text": "a"}, "id": "call-a"},
            {"name": "broken", "args": {"text": "b"}, "id": "call-b"},
        ],
    )
    built = agent(hooked, tools, both, "never")
    with pytest.raises(RuntimeError, match="the tool broke"):
        ask(built, "break both", use_async=use_async)
    assert hooked.ends() == [{"prompt": "break both", "answer": None, "outcome": "error"}]


HANGING_HOOK = (
    "import os, pathlib, time; "
    "pathlib.Path(os.environ['HOOKGATE_PROJECT_DIR'], 'hook-started').touch(); time.sleep(30)"
)


@pytest.mark.parametrize("event", ["preGeneration", "preToolCall"])
def test_post_generation_runs_when_the_run_is_cancelled_during_a_hook(
    hooked: Hooked, tools: Tools, event: str
) -> None:
    import sys

    from adapters.conftest import POLICY

    hooked.file.write_text(
        f'hooks:\n  {event}:\n    - command: {sys.executable} -c "{HANGING_HOOK}"\n'
        f"  postGeneration:\n    - command: {sys.executable} {POLICY}\n"
    )
    model = ScriptedChat(messages=iter([call("echo", text="x"), "never"]))
    built = create_agent(
        model,
        [StructuredTool.from_function(tools.echo, description="echo")],
        middleware=[hookgate_middleware(hooked.file)],
    )

    async def cancel_in_the_hook() -> None:
        task = asyncio.ensure_future(built.ainvoke({"messages": [("user", "wait")]}))
        while not (hooked.dir / "hook-started").exists():  # noqa: ASYNC110 (another process)
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_in_the_hook())
    [end] = hooked.ends()
    assert (end["answer"], end["outcome"]) == (None, "cancelled")
    assert tools.calls == []
