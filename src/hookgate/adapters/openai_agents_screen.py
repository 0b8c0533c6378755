"""The Agents SDK adapter's preToolCall, run on the model's answer before the SDK reads
it. The SDK binds a person's approval to the call's exact arguments (it fingerprints
the call, and refuses a call id whose arguments change afterwards), so a call a hook
rewrites must be rewritten before the SDK first sees it: from then on it is the call the
model made. The approval item a person sees, the call that runs and the history all
show it as it will run.

The model is wrapped wherever the SDK may find it: an agent's own `Model`, and the run
config's `model` and `model_provider` (for a model given by name). The run's input and
options as preGeneration left them (a rewritten question, added context) are made here
too.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from agents import Model, ModelProvider, ModelResponse, RunConfig
from agents.run_config import CallModelData, ModelInputData

from hookgate.adapters.gate import PromptAllowed

Screen = Callable[[ModelResponse], Awaitable[ModelResponse]]
"""The model's answer with its function calls as the hooks left them."""


class ScreeningModel(Model):
    """A model whose every answer passes through `screen` before the SDK reads it.
    Streamed answers pass unscreened (`Runner.run_streamed` is not wrapped)."""

    def __init__(self, inner: Model, screen: Screen) -> None:
        self.inner = inner
        self.screen = screen

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return await self.screen(await self.inner.get_response(*args, **kwargs))

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.stream_response(*args, **kwargs)

    def get_retry_advice(self, request: Any) -> Any:
        return self.inner.get_retry_advice(request)

    async def close(self) -> None:
        await self.inner.close()

    async def _cleanup_on_run_end(self, owner: object) -> None:
        await self.inner._cleanup_on_run_end(owner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class ScreeningProvider(ModelProvider):
    """A provider whose models are screened (a model named in the run config or the
    agent)."""

    def __init__(self, inner: ModelProvider, screen: Screen) -> None:
        self.inner = inner
        self.screen = screen

    def get_model(self, model_name: str | None) -> Model:
        return screening(self.inner.get_model(model_name), self.screen)

    async def aclose(self) -> None:
        await self.inner.aclose()


def screening(model: Model, screen: Screen) -> Model:
    return model if isinstance(model, ScreeningModel) else ScreeningModel(model, screen)


@contextlib.asynccontextmanager
async def screened_run(
    options: dict[str, Any], screen: Screen, decision: PromptAllowed | None = None
) -> AsyncIterator[dict[str, Any]]:
    """`Runner.run`'s `options` with the run config's model and provider screened (and
    the context `decision`'s hooks added). The SDK closes the provider it made for a run
    given no run config (or a dict without `model_provider`); given ours, it does not,
    so such a provider is closed here, after the run, as the SDK would have."""
    given = options.get("run_config")
    made = given is None or (isinstance(given, dict) and "model_provider" not in given)
    if decision is not None:
        options = with_context(decision, options)
    config = options.get("run_config") or RunConfig()
    if isinstance(config, dict):
        config = RunConfig(**config)
    model = screening(config.model, screen) if isinstance(config.model, Model) else config.model
    provider = config.model_provider
    if not isinstance(provider, ScreeningProvider):
        provider = ScreeningProvider(provider, screen)
    try:
        yield {
            **options,
            "run_config": dataclasses.replace(config, model=model, model_provider=provider),
        }
    finally:
        if made:
            await asyncio.shield(provider.aclose())


def function_calls(response: ModelResponse) -> list[tuple[int, Any, dict[str, Any]]]:
    """The function calls of `response` with arguments that parse, each with its place
    in the output and its arguments (a call whose arguments do not parse is left to the
    SDK, which reports it to the model)."""
    calls = []
    for index, item in enumerate(response.output):
        if getattr(item, "type", None) != "function_call":
            continue
        try:
            arguments = json.loads(getattr(item, "arguments", "") or "{}")
        except ValueError:
            continue
        if isinstance(arguments, dict):
            calls.append((index, item, arguments))
    return calls


def prompt_text(input: str | list[Any]) -> str:
    """The question: the input, or the text of its last user message."""
    if isinstance(input, str):
        return input
    for item in reversed(input):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(
                part.get("text", "") for part in content or () if isinstance(part, dict)
            )
    return ""


def rewritten_input(input: str | list[Any], decision: PromptAllowed) -> str | list[Any]:
    if not decision.rewritten:
        return input
    if isinstance(input, str):
        return decision.prompt
    items = list(input)
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if isinstance(item, dict) and item.get("role") == "user":
            items[index] = {**item, "content": decision.prompt}
            break
    return items


def with_context(decision: PromptAllowed, options: dict[str, Any]) -> dict[str, Any]:
    """`options` with a model-input filter adding the hooks' context to the
    instructions, for this run only (after the caller's own filter, if any)."""
    if not decision.context:
        return options
    config = options.get("run_config") or RunConfig()
    if isinstance(config, dict):
        config = RunConfig(**config)
    theirs = config.call_model_input_filter
    notes = "\n\n".join(decision.context)

    async def add_context(data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        if theirs is not None:
            filtered = theirs(data)
            model_data = await filtered if inspect.isawaitable(filtered) else filtered
        instructions = f"{model_data.instructions}\n\n{notes}" if model_data.instructions else notes
        return ModelInputData(input=model_data.input, instructions=instructions)

    return {
        **options,
        "run_config": dataclasses.replace(config, call_model_input_filter=add_context),
    }
