"""A server that fails mid-stream is quoted: its error, on one short line, in the message.

What servers write when they fail after the headers: vLLM a `data: {"error": …}` event,
llama.cpp's server an `error:` field, some an `event: error`, and a Python server whose
handler fails mid-stream a bare JSON error body (then it ends the body, or closes the
connection). Before, all but the first read as "ended the stream before the reply was
complete", with nothing of what the server said.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from hookgate.errors import ModelError
from hookgate.messages import Message, ToolSpec
from hookgate.models.chat_stream import EXCERPT_CHARS
from hookgate.models.openai_chat import OpenAIChatConfig, OpenAIChatModel
from runtime.project import Project, served_model
from support.chat_server import ChatServer, Fault, ServedReply

pytestmark = pytest.mark.anyio

SHELL = ToolSpec("shell", "Run a command.", {"type": "object", "properties": {}})
#: What llama-cpp-python's chatml-function-calling handler raised in the issue's run.
SERVER_SAYS = "Automatic streaming tool choice is not supported"


@pytest.fixture
async def model(chat_server: ChatServer) -> AsyncIterator[OpenAIChatModel]:
    config = OpenAIChatConfig(
        name="m", base_url=chat_server.url, timeout=5.0, tool_choice="required"
    )
    client = OpenAIChatModel(config, environ={})
    yield client
    await client.aclose()


async def failure(model: OpenAIChatModel) -> str:
    with pytest.raises(ModelError) as caught:
        await model.complete([Message("user", "hi")], [SHELL])
    return str(caught.value)


@pytest.mark.parametrize(
    ("fault", "how"),
    [
        ("error_event", "reported an error mid-reply: "),
        ("error_field", "reported an error mid-reply: "),
        ("error_named", "reported an error mid-reply: "),
        ("error_json", "ended the stream before the reply was complete: "),
        ("error_json_close", "broke mid-reply: "),
    ],
)
async def test_the_server_s_error_mid_stream_is_quoted(
    chat_server: ChatServer, model: OpenAIChatModel, fault: Fault, how: str
) -> None:
    chat_server.queue(ServedReply(text="abcdef", fault=fault, error_body=SERVER_SAYS))
    message = await failure(model)
    assert how in message
    assert message.endswith(SERVER_SAYS)
    assert message.startswith((f"the model server at {chat_server.url}", "the connection to"))


@pytest.mark.parametrize("fault", ["error_field", "error_json", "error_json_close"])
async def test_a_long_error_is_one_short_line(
    chat_server: ChatServer, model: OpenAIChatModel, fault: Fault
) -> None:
    body = "Traceback (most recent call last):\n" + "  frame\n" * 5_000
    chat_server.queue(ServedReply(text="abcdef", fault=fault, error_body=body))
    message = await failure(model)
    assert "\n" not in message
    assert "Traceback (most recent call last): frame" in message
    assert len(message) < EXCERPT_CHARS + 200  # the cause and the server, then the error


async def test_a_stream_that_ends_without_a_word_points_at_the_log_and_the_tool_choice(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    """llama-cpp-python's own server ends the body, or closes it, when its handler fails
    mid-stream: nothing on the wire says why."""
    chat_server.queue(ServedReply(text="abcdef", fault="end", fault_after=2))
    message = await failure(model)
    assert message.endswith(
        "ended the stream before the reply was complete (no finish reason; the server's "
        'log may say why; check that it supports tool_choice "required")'
    )


async def test_an_http_error_without_a_message_shows_its_body(
    chat_server: ChatServer, model: OpenAIChatModel
) -> None:
    """llama-cpp-python answers a failed assertion with an empty message: the type tells more."""
    body = {"error": {"message": "", "type": "internal_server_error", "param": None}}
    chat_server.queue(ServedReply.http_error(500, json.dumps(body)))
    message = await failure(model)
    assert message.endswith(
        'answered HTTP 500: {"message":"","type":"internal_server_error","param":null}'
    )


def test_print_mode_says_what_the_server_said(project: Project, chat_server: ChatServer) -> None:
    """Through `hookgate -p`: the one line on stderr carries the server's words."""
    model = {**served_model(chat_server.url), "tool_choice": "required"}
    project.write_agent(model)
    chat_server.queue(ServedReply(text="abcdef", fault="error_json", error_body=SERVER_SAYS))
    run = project.hookgate("-p", "list the files")
    assert run.returncode != 0
    assert run.stdout == ""
    assert f"ended the stream before the reply was complete: {SERVER_SAYS}" in run.stderr
    assert "Traceback" not in run.stderr
