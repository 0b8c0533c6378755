"""`OpenAIChatModel`: any OpenAI-compatible chat server (OpenAI, Ollama, vLLM, llama.cpp).

Streams the reply, hands text deltas to `on_text` as they arrive, assembles tool-call
deltas by index and decodes their JSON arguments. Every failure, including a stream
that ends without a finish reason, becomes a one-line `ModelError`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import openai
from openai.types.chat import (
    ChatCompletionChunk,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
)

from hookgate.errors import ModelError
from hookgate.messages import Message, ModelReply, ToolCall, ToolSpec
from hookgate.models.base import TextSink

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
# Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the SDK insists on one.
PLACEHOLDER_API_KEY = "not-needed"
# Seconds the server may stay silent (connecting, before the first token, between
# chunks); generous because a local model can take long to read a big prompt.
DEFAULT_TIMEOUT_S = 120.0
# Retrying is the runtime's decision; the SDK's own back-off would delay every failure.
MAX_RETRIES = 0
# How much of a server's error body or of bad arguments a message quotes.
EXCERPT_CHARS = 200


@dataclass(frozen=True)
class OpenAIChatConfig:
    """Where the model lives and how to talk to it; validated by `make_model`."""

    name: str
    base_url: str
    api_key_env: str = DEFAULT_API_KEY_ENV
    timeout: float = DEFAULT_TIMEOUT_S
    temperature: float | None = None


class OpenAIChatModel:
    """A `ModelClient` over the official `openai` SDK's streaming chat completions."""

    def __init__(self, config: OpenAIChatConfig, environ: Mapping[str, str] | None = None) -> None:
        """Build the client; the API key is read from `environ[config.api_key_env]`.

        `environ` defaults to `os.environ`. An unset or empty variable gives a
        placeholder key, which keyless local servers accept.
        """
        env = os.environ if environ is None else environ
        self.config = config
        self._client = openai.AsyncOpenAI(
            api_key=env.get(config.api_key_env) or PLACEHOLDER_API_KEY,
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=MAX_RETRIES,
        )

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelReply:
        """Stream one reply; see `ModelClient.complete` for the contract."""
        temperature = self.config.temperature
        try:
            stream = await self._client.chat.completions.create(
                model=self.config.name,
                # The SDK walks `messages` against its TypedDict unions in Python on every
                # request (~0.2 ms a message, holding the event loop): a long session paid
                # for its whole history at each step. Ours are wire format already, and
                # `extra_body` is sent as is, in the placeholder's slot.
                messages=[],
                extra_body={"messages": to_chat_messages(messages)},
                stream=True,
                tools=to_chat_tools(tools) if tools else openai.omit,
                temperature=openai.omit if temperature is None else temperature,
            )
        except openai.OpenAIError as exc:
            raise self._request_error(exc) from exc
        assembler = _ReplyAssembler()
        async with stream:
            while (chunk := await self._next_chunk(stream)) is not None:
                assembler.add(chunk, on_text)
        if not assembler.finished:
            raise ModelError(
                f"the model server at {self.config.base_url} ended the stream "
                "before the reply was complete"
            )
        return assembler.reply()

    async def aclose(self) -> None:
        """Close the SDK client and its connection pool."""
        await self._client.close()

    async def _next_chunk(
        self, stream: openai.AsyncStream[ChatCompletionChunk]
    ) -> ChatCompletionChunk | None:
        try:
            return await anext(stream)
        except StopAsyncIteration:
            return None
        except openai.APITimeoutError as exc:
            raise ModelError(
                f"the model server at {self.config.base_url} went silent for more than "
                f"{self.config.timeout:g} s mid-reply"
            ) from exc
        except openai.APIConnectionError as exc:
            raise ModelError(
                f"the connection to the model server at {self.config.base_url} broke "
                f"mid-reply: {_cause(exc)}"
            ) from exc
        except openai.OpenAIError as exc:
            raise ModelError(
                f"the model server at {self.config.base_url} reported an error mid-reply: "
                f"{_excerpt(str(exc))}"
            ) from exc
        except json.JSONDecodeError as exc:
            raise ModelError(
                f"the model server at {self.config.base_url} sent a stream event "
                f"that is not JSON: {exc.msg}"
            ) from exc

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
            return f" (check the API key in ${self.config.api_key_env})"
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


@dataclass
class _PartialToolCall:
    id: str | None = None
    name: str = ""
    argument_parts: list[str] = field(default_factory=list)


class _ReplyAssembler:
    """Accumulates streamed chunks of the first choice into one `ModelReply`."""

    def __init__(self) -> None:
        self.text_parts: list[str] = []
        self.calls: dict[int, _PartialToolCall] = {}
        self.finished = False

    def add(self, chunk: ChatCompletionChunk, on_text: TextSink | None) -> None:
        # A usage-only chunk has no choices; other choices exist only when n > 1.
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta.content:
                self.text_parts.append(delta.content)
                if on_text is not None:
                    on_text(delta.content)
            for call_delta in delta.tool_calls or ():
                partial = self.calls.setdefault(call_delta.index, _PartialToolCall())
                if call_delta.id:
                    partial.id = call_delta.id
                if call_delta.function is not None:
                    partial.name += call_delta.function.name or ""
                    if call_delta.function.arguments:
                        partial.argument_parts.append(call_delta.function.arguments)
            if choice.finish_reason is not None:
                self.finished = True

    def reply(self) -> ModelReply:
        calls = tuple(
            _decode_tool_call(self.calls[index], position)
            for position, index in enumerate(sorted(self.calls), start=1)
        )
        return ModelReply(text="".join(self.text_parts), tool_calls=calls)


def _decode_tool_call(partial: _PartialToolCall, position: int) -> ToolCall:
    if not partial.name:
        raise ModelError(f"the model sent tool call #{position} without a tool name")
    raw = "".join(partial.argument_parts)
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ModelError(
            f"the model sent malformed JSON arguments for tool {partial.name!r} "
            f"({exc.msg}): {_excerpt(raw)!r}"
        ) from exc
    if not isinstance(arguments, dict):
        raise ModelError(
            f"the model's arguments for tool {partial.name!r} are not a JSON object: "
            f"{_excerpt(raw)!r}"
        )
    # Some servers omit ids; the runtime needs one to pair the tool's answer.
    return ToolCall(id=partial.id or f"call_{position}", name=partial.name, arguments=arguments)


def _status_excerpt(exc: openai.APIStatusError) -> str:
    """The server's own error message if its body is OpenAI-shaped, else the raw body."""
    body = exc.body
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        return _excerpt(body["message"])
    if isinstance(body, str) and body.strip():
        return _excerpt(body)
    try:
        text = exc.response.text
    except Exception:  # the body may be unread or undecodable; the status says enough
        text = ""
    return _excerpt(text) or "(empty body)"


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


def _excerpt(text: str) -> str:
    line = _one_line(text)
    return line if len(line) <= EXCERPT_CHARS else line[: EXCERPT_CHARS - 1] + "…"
