"""`OpenAIChatModel`: any OpenAI-compatible chat server (OpenAI, Ollama, vLLM, llama.cpp).

Streams the reply, hands text deltas to `on_text` as they arrive, assembles tool-call
deltas by index and decodes their JSON arguments. The SDK sends the request; the
stream is read and checked by `chat_stream`, not trusted. Every failure, including a
malformed chunk or a stream that ends without a finish reason, becomes a one-line
`ModelError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from openai.types.chat import (
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
)

from hookgate.errors import ModelError
from hookgate.hooks.kinds.http.capped import BodyTooLong, cap_bodies
from hookgate.hooks.kinds.model.apikey import key_variable
from hookgate.hooks.loop import needs_loop
from hookgate.messages import Message, ModelReply, ToolCall, ToolSpec
from hookgate.models.base import TextSink
from hookgate.models.chat_stream import ReplyAssembler, SseReader, StreamFault, cut, excerpt

# Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the SDK insists on one.
PLACEHOLDER_API_KEY = "not-needed"
# Seconds the server may stay silent (connecting, before the first token, between
# chunks); generous because a local model can take long to read a big prompt.
DEFAULT_TIMEOUT_S = 120.0
# Seconds one model call may take in all, streaming included: a server that trickles
# a byte now and then, or sends only keep-alive comments, is never silent for long.
DEFAULT_TIMEOUT_TOTAL_S = 300.0
# Retrying is the runtime's decision; the SDK's own back-off would delay every failure.
MAX_RETRIES = 0
# Bytes of an HTTP error's body read at most: its message is a line or two.
MAX_ERROR_BODY = 1024 * 1024
# Seconds, and bytes, the rest of a response is read after its `[DONE]` (the end of
# the chunked body, as a rule a few bytes away), so that its connection goes back to
# the pool: otherwise it is closed, and the next call opens a new one while the tools
# and their hooks run. Past either bound it is closed: a server that says `[DONE]`
# and never ends the body cannot hold the turn.
DRAIN_GRACE_S = 0.1
DRAIN_BYTES = 64 * 1024


@dataclass(frozen=True)
class OpenAIChatConfig:
    """Where the model lives and how to talk to it; validated by `make_model`."""

    name: str
    base_url: str
    api_key_env: str | None = None
    """The variable sent as the API key; None: `$OPENAI_API_KEY` to OpenAI's API only,
    no key elsewhere (`hookgate.hooks.kinds.model.apikey`)."""
    timeout: float = DEFAULT_TIMEOUT_S
    timeout_total: float = DEFAULT_TIMEOUT_TOTAL_S
    temperature: float | None = None
    tool_choice: str | Mapping[str, Any] | None = None
    """`auto`, `none`, `required` or `{type: function, function: {name}}`; None: the server's."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """More request fields, sent as given (`top_k`, `chat_template_kwargs`, ...)."""


#: Request fields hookgate sets itself, which `extra` may not set.
RESERVED_FIELDS = frozenset(
    {"model", "messages", "stream", "stream_options", "tools", "tool_choice", "temperature"}
)


class OpenAIChatModel:
    """A `ModelClient` over the official `openai` SDK's streaming chat completions."""

    def __init__(self, config: OpenAIChatConfig, environ: Mapping[str, str] | None = None) -> None:
        """Build the client; the API key is read from the variable `key_variable` names
        for the server (`api_key_env`, else `$OPENAI_API_KEY` for OpenAI's API alone).

        `environ` defaults to `os.environ`. No variable, or an unset or empty one, gives a
        placeholder key, which keyless local servers accept.
        """
        env = os.environ if environ is None else environ
        self.config = config
        self.key_variable = key_variable(config.base_url, config.api_key_env)
        self._client = openai.AsyncOpenAI(
            api_key=env.get(self.key_variable or "") or PLACEHOLDER_API_KEY,
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=MAX_RETRIES,
            # The SDK's own client, but an error's body is read to a cap: the SDK reads
            # it whole, and one that never ends held the agent's memory until the
            # timeout. A reply's stream is bounded as it is read (chat_stream).
            http_client=openai.DefaultAsyncHttpxClient(
                event_hooks={"response": [cap_bodies(MAX_ERROR_BODY, errors_only=True)]}
            ),
        )

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelReply:
        """Stream one reply; see `ModelClient.complete` for the contract.

        `timeout` bounds each silence; `timeout_total` the whole call, however the
        server trickles its bytes or keeps the stream alive with SSE comments.
        """
        await needs_loop()
        try:
            async with asyncio.timeout(self.config.timeout_total):
                return await self._complete(messages, tools, on_text)
        except TimeoutError as exc:
            raise ModelError(
                f"the model server at {self.config.base_url} did not finish its reply within "
                f"{self.config.timeout_total:g} s (timeout_total)"
            ) from exc

    async def _complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], on_text: TextSink | None
    ) -> ModelReply:
        temperature = self.config.temperature
        try:
            async with self._client.chat.completions.with_streaming_response.create(
                model=self.config.name,
                # The SDK walks `messages` against its TypedDict unions in Python on every
                # request (~0.2 ms a message, holding the event loop): a long session paid
                # for its whole history at each step. Ours are wire format already, and
                # `extra_body` is sent as is, in the placeholder's slot.
                messages=[],
                extra_body={**self.config.extra, "messages": to_chat_messages(messages)},
                stream=True,
                tools=to_chat_tools(tools) if tools else openai.omit,
                tool_choice=self._tool_choice(tools),
                temperature=openai.omit if temperature is None else temperature,
            ) as response:
                assembler = await self._read_stream(response.iter_bytes(), on_text)
        except openai.OpenAIError as exc:
            raise self._request_error(exc) from exc
        except BodyTooLong as exc:
            raise ModelError(f"the model server at {self.config.base_url} {exc}") from exc
        return assembler.reply()

    def _tool_choice(self, tools: Sequence[ToolSpec]) -> Any:
        """The configured choice; left out without tools (servers refuse it then)."""
        choice = self.config.tool_choice
        return openai.omit if choice is None or not tools else choice

    async def aclose(self) -> None:
        """Close the SDK client and its connection pool."""
        await needs_loop()  # the pool's locks are asyncio's, even where it never connected
        await self._client.close()

    async def _read_stream(
        self, chunks: AsyncIterator[bytes], on_text: TextSink | None
    ) -> ReplyAssembler:
        """Read and check the SSE stream up to `[DONE]` or its end; a reply it leaves
        unfinished fails, with what the server wrote besides its events, if anything."""
        where = f"the model server at {self.config.base_url}"
        assembler, reader = ReplyAssembler(), SseReader()
        try:
            async with contextlib.aclosing(reader.payloads(chunks)) as payloads:
                async for payload in payloads:
                    assembler.add(payload, on_text)
                    if assembler.done:
                        break
            if assembler.done:
                await _drain(chunks)
        except StreamFault as exc:
            raise ModelError(f"{where} {exc}") from exc
        except httpx2.TimeoutException as exc:
            raise ModelError(
                f"{where} went silent for more than {self.config.timeout:g} s mid-reply"
            ) from exc
        except httpx2.HTTPError as exc:
            said = f"; it said: {reader.said()}" if reader.said() else ""
            raise ModelError(
                f"the connection to {where} broke mid-reply: {_cause(exc)}{said}"
            ) from exc
        if not assembler.finished:
            said = f": {reader.said()}" if reader.said() else self._unfinished_hint()
            raise ModelError(f"{where} ended the stream before the reply was complete{said}")
        return assembler

    def _unfinished_hint(self) -> str:
        """Why a stream may end unfinished with no word from the server."""
        hint = " (no finish reason; the server's log may say why"
        if self.config.tool_choice is not None:
            hint += f"; check that it supports tool_choice {excerpt(self.config.tool_choice)}"
        return hint + ")"

    def _request_error(self, exc: openai.OpenAIError) -> ModelError:
        """Translate an SDK failure into a one-line `ModelError` naming the server."""
        where = f"the model server at {self.config.base_url}"
        if isinstance(exc, openai.APITimeoutError):
            return ModelError(f"{where} did not answer within {self.config.timeout:g} s")
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(f"cannot reach {where}: {_cause(exc)}")
        if isinstance(exc, openai.APIStatusError):
            return ModelError(
                f"{where} answered HTTP {exc.status_code}: "
                f"{_status_excerpt(exc)}{self._status_hint(exc.status_code)}"
            )
        return ModelError(f"the request to {where} failed: {_one_line(str(exc))}")

    def _status_hint(self, status: int) -> str:
        if status in (401, 403):
            if self.key_variable is None:
                return " (no API key is sent: name its variable with api_key_env)"
            return f" (check the API key in ${self.key_variable})"
        if status == 404:
            return f" (check base_url, which usually ends in /v1, and model {self.config.name!r})"
        return ""


def to_chat_messages(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    """Convert our messages to the chat-completions wire format."""
    converted: list[ChatCompletionMessageParam] = []
    for message in messages:
        if message.role == "system":
            converted.append({"role": "system", "content": message.content})
        elif message.role == "user":
            converted.append({"role": "user", "content": message.content})
        elif message.role == "assistant":
            calls = [_to_chat_tool_call(call) for call in message.tool_calls]
            if calls:
                converted.append(
                    {"role": "assistant", "content": message.content, "tool_calls": calls}
                )
            else:
                converted.append({"role": "assistant", "content": message.content})
        else:
            if message.tool_call_id is None:
                raise ModelError("a tool message has no tool_call_id; cannot send it to the model")
            converted.append(
                {"role": "tool", "content": message.content, "tool_call_id": message.tool_call_id}
            )
    return converted


def to_chat_tools(tools: Sequence[ToolSpec]) -> list[ChatCompletionFunctionToolParam]:
    """Convert tool specs to chat-completions `function` tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
            },
        }
        for tool in tools
    ]


def _to_chat_tool_call(call: ToolCall) -> ChatCompletionMessageFunctionToolCallParam:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
    }


def _status_excerpt(exc: openai.APIStatusError) -> str:
    """The server's own error message if its body is OpenAI-shaped, else the raw body."""
    body = exc.body
    if isinstance(body, Mapping):  # the SDK passes the `error` object, where there is one
        message = body.get("message")
        return cut(message) if isinstance(message, str) and message.strip() else excerpt(body)
    if isinstance(body, str) and body.strip():
        return cut(body)
    try:
        text = exc.response.text
    except Exception:  # the body may be unread or undecodable; the status says enough
        text = ""
    return cut(text) or "(empty body)"


def _cause(exc: BaseException) -> str:
    """The low-level reason behind an SDK connection error, e.g. 'connection refused'."""
    chain: list[BaseException] = []
    current = exc.__cause__ or exc.__context__
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    if any(isinstance(error, ConnectionRefusedError) for error in chain):
        return "connection refused (is the server running?)"
    for error in reversed(chain):  # the OS's own words are the most precise
        if isinstance(error, OSError) and isinstance(error.strerror, str) and error.strerror:
            return _one_line(error.strerror)
    reasons = [str(error) for error in chain if str(error)]
    return _one_line(reasons[0] if reasons else str(exc))


def _one_line(text: str) -> str:
    return " ".join(text.split())


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows `[DONE]`, within `DRAIN_GRACE_S` and `DRAIN_BYTES`."""
    read = 0
    with contextlib.suppress(TimeoutError, httpx2.HTTPError):
        async with asyncio.timeout(DRAIN_GRACE_S):
            async for rest in chunks:
                read += len(rest)
                if read > DRAIN_BYTES:
                    return
