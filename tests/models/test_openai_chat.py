"""OpenAIChatModel end to end: the real openai SDK against a real loopback chat server."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator, Mapping

import pytest

from hookgate.errors import ModelError
from hookgate.messages import Message, ModelReply, ToolCall, ToolSpec
from hookgate.models.chat_stream import MAX_ARGUMENT_DEPTH, MAX_LINE_BYTES, MAX_REPLY_CHARS
from hookgate.models.openai_chat import MAX_ERROR_BODY, OpenAIChatConfig, OpenAIChatModel
from support.chat_server import AFTER_DONE, ChatServer, Fault, ServedReply, ServedToolCall

pytestmark = pytest.mark.anyio

HELLO = [Message(role="user", content="hello")]
READ_FILE = ToolSpec(
    name="read_file",
    description="Read a text file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)
# Short enough to keep the stall tests fast, long enough for a loaded CI machine.
TIMEOUT_S = 1.0


@pytest.fixture
async def model(chat_server: ChatServer) -> AsyncIterator[OpenAIChatModel]:
    client = OpenAIChatModel(
        OpenAIChatConfig(name="test-model", base_url=chat_server.url, timeout=TIMEOUT_S),
        environ={},
    )
    yield client
    await client.aclose()


@pytest.fixture
def unused_url() -> Iterator[str]:
    """A loopback URL that refuses connections: the port is bound but never listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


async def ask(model: OpenAIChatModel, deltas: list[str] | None = None) -> ModelReply:
    sink = deltas.append if deltas is not None else None
    return await model.complete(HELLO, [READ_FILE], on_text=sink)


async def test_text_streams_to_on_text_and_comes_back_whole(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    chat_server.queue(ServedReply(text="Hello there, world!", pieces=3))
    deltas: list[str] = []
    reply = await ask(model, deltas)
    assert reply == ModelReply(text="Hello there, world!")
    assert len(deltas) == 3
    assert "".join(deltas) == "Hello there, world!"


@pytest.mark.parametrize("interleave", [False, True])
async def test_tool_calls_split_over_chunks_are_assembled_by_index(
    chat_server: ChatServer, model: OpenAIChatModel, interleave: bool
) -> None:
    chat_server.queue(
        ServedReply(
            text="Reading both.",
            tool_calls=[
                ServedToolCall("read_file", {"path": "a.txt", "lines": [1, 2]}, id="call_a"),
                ServedToolCall("read_file", {"path": "ünïcode.txt"}, id="call_b"),
            ],
            pieces=4,
            interleave=interleave,
        )
    )
    reply = await ask(model)
    assert reply == ModelReply(
        text="Reading both.",
        tool_calls=(
            ToolCall(id="call_a", name="read_file", arguments={"path": "a.txt", "lines": [1, 2]}),
            ToolCall(id="call_b", name="read_file", arguments={"path": "ünïcode.txt"}),
        ),
    )


async def test_empty_arguments_mean_no_arguments(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    chat_server.queue(ServedReply(tool_calls=[ServedToolCall("list_files", "", id="c1")]))
    reply = await ask(model)
    assert reply.tool_calls == (ToolCall(id="c1", name="list_files", arguments={}),)


async def test_request_carries_the_conversation_tools_and_settings(
    chat_server: ChatServer,
) -> None:
    config = OpenAIChatConfig(name="my-model", base_url=chat_server.url, temperature=0.25)
    model = OpenAIChatModel(config, environ={})
    chat_server.queue(ServedReply(text="ok"))
    conversation = [
        Message(role="system", content="Be brief."),
        Message(role="user", content="What is in a.txt?"),
        Message(
            role="assistant",
            content="",
            tool_calls=(ToolCall(id="call_7", name="read_file", arguments={"path": "a.txt"}),),
        ),
        Message(role="tool", content="TOP SECRET", tool_call_id="call_7"),
    ]
    try:
        await model.complete(conversation, [READ_FILE])
    finally:
        await model.aclose()
    body = chat_server.requests[0].body
    assert body["model"] == "my-model"
    assert body["stream"] is True
    assert body["temperature"] == 0.25
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is in a.txt?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                }
            ],
        },
        {"role": "tool", "content": "TOP SECRET", "tool_call_id": "call_7"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a text file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]


async def test_no_tools_and_no_temperature_are_left_out(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    chat_server.queue(ServedReply(text="ok"))
    await model.complete(HELLO, [])
    body = chat_server.requests[0].body
    assert "tools" not in body
    assert "temperature" not in body


@pytest.mark.parametrize(
    ("environ", "expected"),
    [({"MY_KEY": "sk-test-123"}, "Bearer sk-test-123"), ({}, "Bearer not-needed")],
)
async def test_api_key_comes_from_the_named_variable_or_a_placeholder(
    chat_server: ChatServer, environ: Mapping[str, str], expected: str
) -> None:
    config = OpenAIChatConfig(name="m", base_url=chat_server.url, api_key_env="MY_KEY")
    model = OpenAIChatModel(config, environ=environ)
    chat_server.queue(ServedReply(text="ok"))
    try:
        await model.complete(HELLO, [])
    finally:
        await model.aclose()
    assert chat_server.requests[0].headers["authorization"] == expected


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (500, "internal kaboom", "answered HTTP 500: internal kaboom"),
        (
            400,
            '{"error": {"message": "model does not support tools", "type": "invalid"}}',
            "answered HTTP 400: model does not support tools",
        ),
        (401, '{"error": {"message": "bad key"}}', "HTTP 401: bad key (no API key is sent"),
        (404, "404 page not found", "HTTP 404: 404 page not found (check base_url"),
        (503, "", "answered HTTP 503: (empty body)"),
    ],
)
async def test_http_errors_are_model_errors_with_status_and_body(
    chat_server: ChatServer, model: OpenAIChatModel, status: int, body: str, expected: str
) -> None:
    chat_server.queue(ServedReply.http_error(status, body), ServedReply(text="never sent"))
    with pytest.raises(ModelError) as caught:
        await ask(model)
    assert expected in str(caught.value)
    assert chat_server.url in str(caught.value)
    assert len(chat_server.requests) == 1, "a failure must not be retried behind our back"


async def test_long_error_bodies_are_cut_to_one_short_line(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    chat_server.queue(ServedReply.http_error(500, "trace line\n" * 500))
    with pytest.raises(ModelError) as caught:
        await ask(model)
    message = str(caught.value)
    assert "\n" not in message
    assert len(message) < 400


async def test_refused_connection_is_a_model_error(unused_url: str) -> None:
    model = OpenAIChatModel(OpenAIChatConfig(name="m", base_url=unused_url), environ={})
    try:
        with pytest.raises(ModelError, match="connection refused") as caught:
            await ask(model)
    finally:
        await model.aclose()
    assert f"cannot reach the model server at {unused_url}" in str(caught.value)


async def test_connection_dropped_mid_stream_is_a_model_error(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    chat_server.queue(ServedReply(text="abcdef", fault="drop", fault_after=2))
    deltas: list[str] = []
    with pytest.raises(ModelError, match="broke mid-reply"):
        await ask(model, deltas)
    assert deltas == ["ab"], "text that arrived before the drop was still shown"


async def test_stream_that_ends_without_finishing_is_a_model_error(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    chat_server.queue(ServedReply(text="abcdef", fault="end", fault_after=2))
    with pytest.raises(ModelError, match="ended the stream before the reply was complete"):
        await ask(model)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("error_event", "reported an error mid-reply: out of KV cache"),
        ("garbage", "sent a stream event that is not JSON"),
    ],
)
async def test_bad_stream_events_are_model_errors(
    chat_server: ChatServer, model: OpenAIChatModel, fault: Fault, expected: str
) -> None:
    chat_server.queue(
        ServedReply(text="abcdef", fault=fault, fault_after=2, error_body="out of KV cache")
    )
    with pytest.raises(ModelError, match=expected):
        await ask(model)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("stall", "went silent for more than 1 s mid-reply"),
        ("hang", "did not answer within 1 s"),
    ],
)
async def test_silent_server_times_out_promptly(
    chat_server: ChatServer, model: OpenAIChatModel, fault: Fault, expected: str
) -> None:
    chat_server.queue(ServedReply(text="abcdef", fault=fault, fault_after=2))
    started = time.monotonic()
    with pytest.raises(ModelError, match=expected):
        await ask(model)
    assert time.monotonic() - started < TIMEOUT_S + 2


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"path": "a.txt"', "malformed JSON arguments for tool 'read_file'"),
        ("[1, 2]", "arguments for tool 'read_file' are not a JSON object"),
        ("null", "arguments for tool 'read_file' are not a JSON object"),
    ],
)
async def test_bad_tool_arguments_are_a_model_error_naming_the_tool(
    chat_server: ChatServer, model: OpenAIChatModel, arguments: str, expected: str
) -> None:
    chat_server.queue(ServedReply(tool_calls=[ServedToolCall("read_file", arguments)]))
    with pytest.raises(ModelError, match=expected) as caught:
        await ask(model)
    assert repr(arguments) in str(caught.value)


def nested_arguments(levels: int) -> str:
    """`{"path": [[…]]}`: an object and lists inside it, `levels` containers deep."""
    return '{"path": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


@pytest.mark.parametrize(
    ("levels", "refused"),
    [(MAX_ARGUMENT_DEPTH, False), (MAX_ARGUMENT_DEPTH + 1, True), (100_000, True)],
)
async def test_arguments_nested_too_deeply_are_a_model_error(
    chat_server: ChatServer, model: OpenAIChatModel, levels: int, refused: bool
) -> None:
    """A hundred thousand brackets raised a RecursionError out of the model call, and
    arguments a little shallower would have met one in a later hook or request."""
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("read_file", nested_arguments(levels))])
    )
    if not refused:
        (call,) = (await ask(model)).tool_calls
        assert call.arguments["path"] == json.loads(nested_arguments(levels))["path"]
        return
    with pytest.raises(ModelError, match=f"nested more than {MAX_ARGUMENT_DEPTH} deep"):
        await ask(model)


async def test_a_stream_event_nested_too_deeply_is_a_model_error(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    chat_server.queue(
        ServedReply(raw_events=[b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n"])
    )
    with pytest.raises(ModelError, match="sent a stream event nested too deeply to read"):
        await ask(model)


async def test_streamed_calls_share_one_connection(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    """The body is read to its end after [DONE]: the connection serves the next call."""
    chat_server.queue(ServedReply(text="one"), ServedReply(text="two"), ServedReply(text="3"))
    assert [(await ask(model)).text for _ in range(3)] == ["one", "two", "3"]
    assert len({request.client_port for request in chat_server.requests}) == 1


async def test_a_body_never_ended_after_done_does_not_hold_the_call(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    """[DONE] answers the call; a server that then keeps the body open is not waited for."""
    chat_server.queue(
        ServedReply(text="done", fault="stall", fault_after=AFTER_DONE), ServedReply(text="next")
    )
    started = time.monotonic()
    assert (await ask(model)).text == "done"
    assert time.monotonic() - started < TIMEOUT_S  # the silence timeout never came into it
    assert (await ask(model)).text == "next"


async def test_cancelled_call_leaves_the_client_usable(chat_server: ChatServer) -> None:
    config = OpenAIChatConfig(name="m", base_url=chat_server.url, timeout=30.0)
    model = OpenAIChatModel(config, environ={})
    chat_server.queue(ServedReply(text="slow", fault="stall"), ServedReply(text="next"))
    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await ask(model)
        assert time.monotonic() - started < 2
        assert (await ask(model)).text == "next"
    finally:
        await model.aclose()


def event(data: str) -> bytes:
    return f"data: {data}\n\n".encode()


FIRST = '{"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": null}]}'

#: Chunks a broken or hostile server may send, and what the one-line error says.
MALFORMED = {
    "delta null": (event('{"choices": [{"index": 0, "delta": null}]}'), "a delta that is not"),
    "choices null": (event('{"choices": null}'), "choices that are not a list"),
    "choices string": (event('{"choices": "abc"}'), "choices that are not a list"),
    "list chunk": (event("[1, 2]"), "a stream event that is not a JSON object"),
    "number content": (
        event('{"choices": [{"index": 0, "delta": {"content": 42}}]}'),
        "the content that is not a string: 42",
    ),
    "number tool name": (
        event('{"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": 7}}]}}]}'),
        "a tool name that is not a string: 7",
    ),
    "choice not object": (event('{"choices": [3]}'), "a choice that is not a JSON object"),
    "invalid utf-8": (b'data: {"choices": "\xff\xfe"}\n\n', "bytes that are not UTF-8"),
}


@pytest.mark.parametrize("fault", MALFORMED.values(), ids=MALFORMED.keys())
async def test_a_malformed_chunk_is_a_one_line_model_error(
    chat_server: ChatServer, model: OpenAIChatModel, fault: tuple[bytes, str]
) -> None:
    raw, expected = fault
    chat_server.queue(ServedReply(raw_events=[event(FIRST), raw]))

    with pytest.raises(ModelError) as caught:
        await ask(model)

    message = str(caught.value)
    assert message.startswith(f"the model server at {chat_server.url} sent ")
    assert expected in message
    assert "\n" not in message


@pytest.mark.parametrize("fault", ["trickle", "keepalive"])
async def test_a_reply_that_never_goes_silent_ends_at_timeout_total(
    chat_server: ChatServer, fault: Fault
) -> None:
    """A byte now and then, or keep-alive comments: the silence timeout never fires."""
    config = OpenAIChatConfig(name="m", base_url=chat_server.url, timeout=5.0, timeout_total=1.0)
    model = OpenAIChatModel(config, environ={})
    chat_server.queue(ServedReply(text="a long answer " * 20, fault=fault))
    try:
        started = time.monotonic()
        with pytest.raises(ModelError, match=r"did not finish its reply within 1 s"):
            await ask(model)
        assert time.monotonic() - started < 5.0
    finally:
        await model.aclose()


async def test_a_line_past_the_cap_fails_the_call(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    chat_server.queue(ServedReply(text="abc", fault="huge_line", fault_after=1))

    with pytest.raises(ModelError, match=f"a line longer than {MAX_LINE_BYTES} bytes"):
        await ask(model)


async def test_a_server_streaming_without_end_is_cut_at_the_reply_cap(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    """Well-formed text as fast as it is read, for ever: without a cap the reply grew by
    about 200 MiB a second until timeout_total (300 s by default), and the agent with it."""
    chat_server.queue(ServedReply(text="abc", fault="flood", fault_after=1))
    deltas: list[str] = []

    with pytest.raises(ModelError, match=f"a reply longer than {MAX_REPLY_CHARS:,} characters"):
        await ask(model, deltas)
    assert 0 < sum(map(len, deltas)) <= MAX_REPLY_CHARS


def path_arguments(length: int) -> str:
    """`{"path": "yyy…"}`, `length` characters long."""
    return '{"path": "' + "y" * (length - 12) + '"}'


async def test_an_error_whose_body_never_ends_is_cut_at_its_cap(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    """The SDK reads an error's body whole: one without end held the agent's memory
    (2.1 GiB in 10 s) until timeout_total."""
    chat_server.queue(ServedReply(status=500, fault="flood"))
    started = time.monotonic()

    with pytest.raises(ModelError, match=f"sent an HTTP 500 response past the {MAX_ERROR_BODY:,}"):
        await ask(model)
    assert time.monotonic() - started < 5.0


@pytest.mark.parametrize(
    ("text", "arguments", "cut"),
    [
        ("x" * 1000, "", False),
        ("x" * 1001, "", True),
        ("x" * 600, path_arguments(400), False),  # 1,000 characters in all
        ("x" * 600, path_arguments(401), True),
    ],
)
async def test_the_reply_cap_counts_text_and_arguments_together(
    chat_server: ChatServer,
    model: OpenAIChatModel,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    arguments: str,
    cut: bool,
) -> None:
    monkeypatch.setattr("hookgate.models.chat_stream.MAX_REPLY_CHARS", 1000)
    calls = [ServedToolCall("read_file", arguments)] if arguments else []
    chat_server.queue(ServedReply(text=text, tool_calls=calls))

    if cut:
        with pytest.raises(ModelError, match="a reply longer than 1,000 characters"):
            await ask(model)
    else:
        reply = await ask(model)
        assert reply.text == text
        assert [len(call.arguments["path"]) + 12 for call in reply.tool_calls] == (
            [len(arguments)] if arguments else []
        )


async def test_a_tool_name_repeated_in_every_chunk_is_taken_once(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    # llama.cpp's server repeats `function.name` in every delta of a streamed call.
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("read_file", {"path": "a.txt"})], repeat_name=True)
    )

    reply = await ask(model)

    assert [(call.name, dict(call.arguments)) for call in reply.tool_calls] == [
        ("read_file", {"path": "a.txt"})
    ]


async def test_tool_choice_and_extra_settings_reach_the_server(chat_server: ChatServer) -> None:
    config = OpenAIChatConfig(
        name="m", base_url=chat_server.url, tool_choice="required",
        extra={"top_k": 20, "cache_prompt": True},
    )  # fmt: skip
    model = OpenAIChatModel(config, environ={})
    chat_server.queue(ServedReply(text="ok"))
    try:
        await model.complete(HELLO, [READ_FILE])
    finally:
        await model.aclose()

    body = chat_server.requests[0].body
    assert (body["tool_choice"], body["top_k"], body["cache_prompt"]) == ("required", 20, True)
    assert body["messages"] == [{"role": "user", "content": "hello"}]
