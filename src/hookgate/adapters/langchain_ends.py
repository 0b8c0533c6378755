"""postGeneration for a LangChain run that ends where no middleware hook runs: a stream
the caller stopped reading between two steps (closed, garbage-collected, its task
cancelled), LangGraph's recursion limit, another middleware's exception.

LangGraph ends every graph run through its callbacks, `on_chain_end` or
`on_chain_error` (`GeneratorExit` for a stream closed unread, `CancelledError` for a
cancelled one). One handler, `RUN_ENDS`, is added to every LangChain run of the process
through langchain_core's configure hook (as LangSmith's tracer is). It notes which run
each chain run belongs to, and nothing else, unless the middleware asked it to watch a
run: when that graph run fails or is abandoned, it ends the hookgate run (the
middleware's own end, which records postGeneration at most once per run).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import register_configure_hook
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp

from hookgate.adapters.gate import TurnEnd

End = Callable[[TurnEnd], Awaitable[None]]
"""Ends one hookgate run with the outcome given, unless it has ended already."""


class RunEnds(BaseCallbackHandler):
    """Which graph run each chain run is part of, and the hookgate runs to end when a
    graph run fails. Called inline (no thread hop), so each call does a dict update."""

    run_inline = True

    def __init__(self) -> None:
        self.parents: dict[UUID, UUID] = {}
        """Each running chain run's parent (a graph run has none: it is the root)."""
        self.watched: dict[UUID, dict[str, End]] = {}
        """By root run: the hookgate runs begun in it, each with its end."""
        self.lock = threading.Lock()

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        if parent_run_id is not None:
            self.parents[run_id] = parent_run_id

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """A run that ends well was ended by the middleware (or paused for a person)."""
        self._forget(run_id)

    async def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Async, so that an async run (whose graph awaits it, shielded) runs the hooks
        on its own loop without blocking it; a sync run's callbacks run it on a loop of
        their own."""
        ends = self._forget(run_id)
        if not ends or isinstance(error, GraphBubbleUp):  # an interrupt: paused, not over
            return
        abandoned = isinstance(error, (GeneratorExit, asyncio.CancelledError, KeyboardInterrupt))
        for end in ends.values():
            await end("cancelled" if abandoned else "error")

    def watch(self, run: str, end: End) -> None:
        """End hookgate run `run` with `end` if the graph run the caller is a node of
        fails or is abandoned (nothing happens if it ends well)."""
        try:
            callbacks = get_config().get("callbacks")
        except RuntimeError:  # not inside a graph run
            return
        node = getattr(callbacks, "parent_run_id", None)
        if node is None:
            return
        with self.lock:
            root = node
            while root in self.parents:
                root = self.parents[root]
            self.watched.setdefault(root, {})[run] = end

    def _forget(self, run_id: UUID) -> dict[str, End]:
        with self.lock:
            self.parents.pop(run_id, None)
            return self.watched.pop(run_id, {})


RUN_ENDS = RunEnds()
register_configure_hook(ContextVar("hookgate_run_ends", default=RUN_ENDS), inheritable=True)
