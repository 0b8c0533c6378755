"""The LangChain adapter with LangChain's OpenAI chat model streaming from a real
OpenAI-compatible server on loopback, and the test hooks as real processes: what
streams, callbacks and stream events carry, and postGeneration when the caller stops
reading a stream."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("langchain_openai")

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI

from adapters.conftest import Hooked, Tools
from hookgate.adapters.langchain import hookgate_middleware
from support.chat_server import ChatServer, ServedReply, ServedToolCall

SECRET = "SECRET-7f3a"
"""What the vault tool returns, and the Python hook's postToolCall scrubs."""
QUESTION = {"messages": [{"role": "user", "content": "read the vault"}]}


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as chat:
        yield chat


def vault_echo(text: str) -> str:
    """A tool whose result holds a secret its arguments do not (the hook's policy
    scrubs an `*echo` result with SECRET in it)."""
    return f"{text}: the token is {SECRET}"


def served_agent(hooked: Hooked, server: ChatServer, *, tools: Tools | None = None) -> Any:
    model = ChatOpenAI(model="served", base_url=server.url, api_key="test", streaming=True)
    functions = [vault_echo] if tools is None else [tools.echo]
    return create_agent(
        model,
        [StructuredTool.from_function(f) for f in functions],
        middleware=[hookgate_middleware(hooked.file)],
    )


def vault_then(answer: str) -> list[ServedReply]:
    return [
        ServedReply(tool_calls=[ServedToolCall("vault_echo", {"text": "ok"})]),
        ServedReply(answer),
    ]


class Recorder(BaseCallbackHandler):
    """Every callback LangChain calls, with what it carries, as text."""

    def __init__(self) -> None:
        self.records: list[str] = []
        self.tool_ends: list[Any] = []

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self.tool_ends.append(output)
        self.records.append(f"tool_end {output!r} {kwargs!r}")

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        self.records.append(f"chain_end {outputs!r}")

    def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        self.records.append(f"tool_start {input_str!r} {kwargs!r}")


def test_a_redacted_result_is_all_that_stream_events_and_callbacks_carry(
    hooked: Hooked, server: ChatServer
) -> None:
    server.queue(*vault_then("done"))
    events_carry_only(served_agent(hooked, server), server, SECRET, "[scrubbed by policy]")


def events_carry_only(built: Any, server: ChatServer, leak: str, scrubbed: str) -> None:
    """Run `built` with `astream_events` (v2) and a callback recorder: no event, callback
    or model request carries `leak`, and the one tool's end carries `scrubbed`."""
    recorder = Recorder()

    async def events() -> list[dict[str, Any]]:
        config = {"callbacks": [recorder]}
        return [e async for e in built.astream_events(QUESTION, config, version="v2")]

    seen = asyncio.run(events())
    assert leak not in "\n".join(repr(event) for event in seen)
    assert leak not in "\n".join(recorder.records)
    assert leak not in server.sent_text()
    [tool_end] = [e for e in seen if e["event"] == "on_tool_end"]
    assert tool_end["data"]["output"].content == scrubbed
    assert [end.content for end in recorder.tool_ends] == [scrubbed]


def test_a_redacted_result_is_all_that_a_sync_runs_callbacks_and_stream_carry(
    hooked: Hooked, server: ChatServer
) -> None:
    server.queue(*vault_then("done"))
    recorder = Recorder()
    built = served_agent(hooked, server)
    chunks = list(
        built.stream(QUESTION, {"callbacks": [recorder]}, stream_mode=["updates", "messages"])
    )
    assert SECRET not in "\n".join(repr(chunk) for chunk in chunks)
    assert SECRET not in "\n".join(recorder.records)
    assert [end.content for end in recorder.tool_ends] == ["[scrubbed by policy]"]


def test_a_tools_own_handled_error_is_checked_before_callbacks_see_it(
    hooked: Hooked, server: ChatServer
) -> None:
    from langchain_core.tools import ToolException

    def broken(text: str) -> str:
        """Fails with the secret in its error."""
        raise ToolException(f"failed reading {SECRET}")

    server.queue(
        ServedReply(tool_calls=[ServedToolCall("broken", {"text": "x"})]), ServedReply("ok")
    )
    recorder = Recorder()
    model = ChatOpenAI(model="served", base_url=server.url, api_key="test", streaming=True)
    tool = StructuredTool.from_function(broken, handle_tool_error=True)
    built = create_agent(model, [tool], middleware=[hookgate_middleware(hooked.file)])
    built.invoke(QUESTION, {"callbacks": [recorder]})
    [end] = recorder.tool_ends
    assert end.status == "error"
    # the hook saw the failure as a failure, with the tool's own handled text
    assert hooked.results() == [{"content": f"failed reading {SECRET}", "is_error": True}]


LEAKS = {
    "post_ask": ("the token is SECRET-7f3a", "[answer scrubbed by policy]"),
    "post_tool_call": ("the PRIVATE KEY is 9c1e", "[key scrubbed by policy]"),
}
"""What a hand-off's answer leaks, and what the hook that scrubs it leaves: postAsk
scrubs a SECRET, postToolCall (after a postAsk that left it) a PRIVATE KEY."""


def hand_off_agent(hooked: Hooked, server: ChatServer, leak: str, *, coroutine: bool) -> Any:
    """An agent whose `vault_research` tool (a function, or a coroutine) hands off to
    the `vault` agent, which answers with `leak` (its question does not hold it)."""

    def vault_research(question: str) -> str:
        """Asks the vault agent."""
        return f"{question}: {leak}"

    async def avault_research(question: str) -> str:
        return vault_research(question)

    server.queue(
        ServedReply(tool_calls=[ServedToolCall("vault_research", {"question": "ok"})]),
        ServedReply("done"),
    )
    model = ChatOpenAI(model="served", base_url=server.url, api_key="test", streaming=True)
    middleware = hookgate_middleware(hooked.file, agents={"vault_research": "vault"})
    tool = StructuredTool.from_function(
        vault_research, coroutine=avault_research if coroutine else None
    )
    return create_agent(model, [tool], middleware=[middleware])


HAND_OFF_ORDER = [
    "preToolCall:vault_research", "preAsk:vault", "subagentStart:vault",
    "subagentStop:vault", "postAsk:vault", "postToolCall:vault_research",
]  # fmt: skip


@pytest.mark.parametrize("coroutine", [False, True], ids=["function", "coroutine"])
@pytest.mark.parametrize("hook", LEAKS)
def test_a_hand_offs_redacted_answer_is_all_that_stream_events_and_callbacks_carry(
    hooked: Hooked, server: ChatServer, hook: str, coroutine: bool
) -> None:
    leak, scrubbed = LEAKS[hook]
    built = hand_off_agent(hooked, server, leak, coroutine=coroutine)
    events_carry_only(built, server, leak, scrubbed)
    assert hooked.hand_offs() == HAND_OFF_ORDER


@pytest.mark.parametrize("hook", LEAKS)
def test_a_hand_offs_redacted_answer_is_all_that_a_sync_runs_callbacks_and_stream_carry(
    hooked: Hooked, server: ChatServer, hook: str
) -> None:
    leak, scrubbed = LEAKS[hook]
    recorder = Recorder()
    built = hand_off_agent(hooked, server, leak, coroutine=False)
    chunks = list(
        built.stream(QUESTION, {"callbacks": [recorder]}, stream_mode=["updates", "messages"])
    )
    assert leak not in "\n".join(repr(chunk) for chunk in chunks)
    assert leak not in "\n".join(recorder.records)
    assert [end.content for end in recorder.tool_ends] == [scrubbed]
    assert hooked.hand_offs() == HAND_OFF_ORDER


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_hand_offs_handled_error_is_checked_before_callbacks_see_it(
    hooked: Hooked, server: ChatServer, use_async: bool
) -> None:
    from langchain_core.tools import ToolException

    def vault_research(question: str) -> str:
        """Fails with the secret in its error."""
        raise ToolException(f"the vault agent failed reading {SECRET}")

    server.queue(
        ServedReply(tool_calls=[ServedToolCall("vault_research", {"question": "ok"})]),
        ServedReply("done"),
    )
    recorder = Recorder()
    model = ChatOpenAI(model="served", base_url=server.url, api_key="test", streaming=True)
    tool = StructuredTool.from_function(vault_research, handle_tool_error=True)
    middleware = hookgate_middleware(hooked.file, agents={"vault_research": "vault"})
    built = create_agent(model, [tool], middleware=[middleware])
    config = {"callbacks": [recorder]}
    if use_async:
        asyncio.run(built.ainvoke(QUESTION, config))
    else:
        built.invoke(QUESTION, config)
    assert SECRET not in "\n".join(recorder.records)
    [end] = recorder.tool_ends
    assert (end.content, end.status) == ("[answer scrubbed by policy]", "error")
    assert hooked.hand_offs() == HAND_OFF_ORDER


async def first_chunk_then(stream: Any, stop: str) -> None:
    """Read one chunk of `stream`, then stop reading it as `stop` says."""
    async for _chunk in stream:
        break
    if stop == "close":
        await stream.aclose()
    elif stop == "collect":
        del stream
        gc.collect()


@pytest.mark.parametrize("mode", ["updates", "messages"])
@pytest.mark.parametrize("stop", ["close", "collect"])
def test_a_stream_the_caller_stops_reading_records_post_generation_once(
    hooked: Hooked, server: ChatServer, mode: str, stop: str
) -> None:
    server.queue(*vault_then("never read"))
    built = served_agent(hooked, server)

    async def go() -> None:
        await first_chunk_then(built.astream(QUESTION, stream_mode=mode), stop)
        await recorded(hooked)  # while the loop runs on, as a server's does

    asyncio.run(go())
    assert hooked.ends() == [{"prompt": "read the vault", "answer": None, "outcome": "cancelled"}]


async def recorded(hooked: Hooked) -> None:
    """Wait (on the running loop) until the hooks recorded a postGeneration."""
    for _ in range(1200):  # a bound for a hung run, not a time the test measures
        if hooked.ends():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("no postGeneration was recorded while the loop ran")


def test_a_stream_whose_task_is_cancelled_between_chunks_records_post_generation_once(
    hooked: Hooked, server: ChatServer
) -> None:
    server.queue(*vault_then("never read"))
    built = served_agent(hooked, server)

    async def go() -> None:
        read_one = asyncio.Event()

        async def consume() -> None:
            async for _chunk in built.astream(QUESTION, stream_mode="updates"):
                read_one.set()
                await asyncio.Event().wait()  # the caller stops reading: it waits forever

        task = asyncio.ensure_future(consume())
        await read_one.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert [end["outcome"] for end in hooked.ends()] == ["cancelled"]


def test_a_sync_stream_the_caller_stops_reading_records_post_generation_once(
    hooked: Hooked, server: ChatServer
) -> None:
    server.queue(*vault_then("never read"))
    stream = served_agent(hooked, server).stream(QUESTION, stream_mode="updates")
    next(stream)
    stream.close()
    assert [end["outcome"] for end in hooked.ends()] == ["cancelled"]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_stream_read_to_its_end_records_post_generation_once(
    hooked: Hooked, server: ChatServer, use_async: bool
) -> None:
    server.queue(*vault_then("all done"))
    built = served_agent(hooked, server)
    if use_async:

        async def read_all() -> None:
            async for _chunk in built.astream(QUESTION, stream_mode=["updates", "messages"]):
                pass

        asyncio.run(read_all())
    else:
        for _chunk in built.stream(QUESTION, stream_mode=["updates", "messages"]):
            pass
    gc.collect()
    assert hooked.ends() == [
        {"prompt": "read the vault", "answer": "all done", "outcome": "answered"}
    ]


def test_the_recursion_limit_ending_a_run_records_post_generation_once(
    hooked: Hooked, server: ChatServer
) -> None:
    from langgraph.errors import GraphRecursionError

    server.queue(*vault_then("never"))
    built = served_agent(hooked, server)
    with pytest.raises(GraphRecursionError):
        built.invoke(QUESTION, {"recursion_limit": 3})
    assert hooked.ends() == [{"prompt": "read the vault", "answer": None, "outcome": "error"}]


def test_a_resumed_stream_the_caller_stops_reading_records_post_generation_once(
    hooked: Hooked, server: ChatServer, tools: Tools
) -> None:
    """A run paused for a person (a hook's `ask`) and resumed is a new graph run, which
    the caller may stop reading too."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    server.queue(
        ServedReply(tool_calls=[ServedToolCall("deploy", {"text": "now"})]), ServedReply("never")
    )
    model = ChatOpenAI(model="served", base_url=server.url, api_key="test", streaming=True)
    built = create_agent(
        model,
        [StructuredTool.from_function(tools.deploy)],
        middleware=[hookgate_middleware(hooked.file)],
        checkpointer=InMemorySaver(),
    )
    thread = {"configurable": {"thread_id": "1"}}
    approve = Command(resume={"decisions": [{"type": "approve"}]})

    async def go() -> None:
        paused = await built.ainvoke(QUESTION, thread)
        assert paused["__interrupt__"]
        assert hooked.ends() == []  # paused, not over
        await first_chunk_then(built.astream(approve, thread, stream_mode="updates"), "close")

    asyncio.run(go())
    assert tools.calls == [("deploy", {"text": "now"})]
    assert hooked.ends() == [{"prompt": "read the vault", "answer": None, "outcome": "cancelled"}]
