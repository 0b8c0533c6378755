"""The one interface the runtime talks to a model through: `ModelClient`.

A client turns the conversation so far plus the offered tools into one `ModelReply`,
streaming text deltas to an optional callback; every failure is a `ModelError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from hookgate.messages import Message, ModelReply, ToolSpec

TextSink = Callable[[str], None]
"""Receives each streamed text delta, in order, as soon as it arrives."""


class ModelClient(Protocol):
    """A chat model that can answer with text, tool calls, or both."""

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelReply:
        """Ask the model for its next reply to `messages`, offering `tools`.

        `on_text` is called with every text delta as it streams in; the deltas
        concatenate to the returned `ModelReply.text`. Any failure (unreachable
        server, HTTP error, timeout, truncated or malformed reply) raises
        `hookgate.errors.ModelError` with a one-line message. Cancellation
        propagates as `asyncio.CancelledError` after the request is abandoned.
        """
        ...

    async def aclose(self) -> None:
        """Release connections and other resources; the client is unusable afterwards."""
        ...
