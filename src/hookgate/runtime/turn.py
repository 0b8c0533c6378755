"""The turn function every front end calls: question in, one `TurnOutcome` out.

    preGeneration ─▶ model ⇄ tools (each call screened, then run, by `toolcall`) ─▶ postGeneration

A blocked question leaves a marker in the history, never the question; added context
rides along with the question for this turn only; `postGeneration` runs once the
turn is over whatever its outcome, cancellation included.
"""

from __future__ import annotations

from typing import Any

from hookgate.errors import ModelError
from hookgate.hooks import MAX_CONTINUES, OnError, Outcome
from hookgate.hooks.loop import loop_running, needs_loop
from hookgate.hooks.wording import BLOCKED_MARKER, DEFAULT_BLOCK_RESPONSE, UNCHECKED_MARKER
from hookgate.messages import Message, ToolCall
from hookgate.runtime.agent import AgentSession
from hookgate.runtime.caps import RefusedCall, apply_caps
from hookgate.runtime.toolcall import (
    CallOutcome,
    ScreenedCall,
    rescreen,
    run_guarded,
    screen_call,
    show_notices,
)
from hookgate.tools import ToolResult
from hookgate.view import HidesBlockedQuestions, NoticeKind, TurnView

TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
else:
    from hookgate.hooks.loop import asyncio

#: The answer recorded for a tool call the user interrupted (or never let start).
CANCELLED_TOOL_CALL = "[cancelled: the user interrupted the turn]"
#: The answer recorded for a tool call left over when a hook stopped the turn.
STOPPED_TOOL_CALL = "[not run: a hook stopped the turn]"


class _Outcome:
    """How a turn ended: immutable, equal only to an outcome of the same kind and fields.

    Not NamedTuples: a tuple equals any tuple of the same values (`Answered("x") ==
    TurnFailed("x")`), and `Cancelled()` would be an empty one, false.
    Not dataclasses: `dataclasses` imports `inspect`, ~18 ms of every start of `-p`
    (tests/frontends/test_startup_imports.py keeps it out).
    """

    __slots__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(other, name) == getattr(self, name) for name in self.__slots__
        )

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Answered(_Outcome):
    """The model answered without asking for a tool: its final text."""

    __slots__ = ("text",)
    text: str

    def __init__(self, text: str) -> None:
        object.__setattr__(self, "text", text)


class PromptBlocked(_Outcome):
    """A hook blocked the question: why, and the answer the user reads instead."""

    __slots__ = ("reason", "response")
    reason: str
    response: str

    def __init__(self, reason: str, response: str) -> None:
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "response", response)


class TurnFailed(_Outcome):
    """The turn ended without an answer (a model error, the step limit, a hook's stop): why."""

    __slots__ = ("message",)
    message: str

    def __init__(self, message: str) -> None:
        object.__setattr__(self, "message", message)


class Cancelled(_Outcome):
    """The user interrupted the turn (what `postGeneration` hooks hear; `run_turn` raises)."""

    __slots__ = ()


TurnOutcome = Answered | PromptBlocked | TurnFailed | Cancelled


async def run_turn(agent: AgentSession, question: str, view: TurnView) -> TurnOutcome:
    """Run one turn of `agent` on `question`, reporting through `view`.

    Never raises for a hook, model or tool failure: those are outcomes. A cancellation
    propagates, after `postGeneration` has run.
    """
    recorded = UNCHECKED_MARKER
    outcome: TurnOutcome = TurnFailed("the turn did not start")
    continues, finished = 0, False
    try:
        pre = await agent.engine.run("preGeneration", {"prompt": question})
        show_notices(pre, view)
        if pre.halted:
            _show_failed_guard(pre, view)
            outcome = _block_question(agent, pre.halt_reason or "", pre.response)
            recorded = BLOCKED_MARKER.format(reason=outcome.reason)
            if isinstance(view, HidesBlockedQuestions):
                view.question_blocked(recorded)
            return outcome
        recorded = pre.payload["prompt"]
        agent.history.append(Message("user", recorded))
        context = agent.take_start_context() + pre.context
        while True:
            outcome = await _model_loop(agent, recorded, context, view)
            if not isinstance(outcome, Answered) or continues == MAX_CONTINUES:
                return outcome
            # The end of the turn's hooks may send the agent on (Claude's Stop block).
            # Set first: a cancellation while they run must not run them a second time.
            finished = True
            post = await _post_generation(agent, recorded, outcome, view, continues > 0)
            if post.continue_with is None:
                return outcome
            finished = False
            continues += 1
            agent.history.append(Message("user", post.continue_with or ""))
            context = ()
    except asyncio.CancelledError:
        outcome = Cancelled()
        agent.history.event("cancelled", {})
        raise
    finally:
        if not finished:
            await _post_generation(agent, recorded, outcome, view, continues > 0)


def _show_failed_guard(pre: Outcome, view: TurnView) -> None:
    """Say which hook stopped the question, and why, or which one failed.

    A fail-safe hook that crashed or hung has no reason to give, and the user must
    learn it is broken, not strict.
    """
    if pre.blocked_by is not None:
        view.notice(
            f"the question was blocked by hook {pre.blocked_by!r}: {pre.reason}", NoticeKind.BLOCKED
        )
    failed = [failure for failure in pre.errors if failure.on_error is OnError.FAIL]
    for failure in failed:
        view.notice(f"{failure}; the question was not sent to the model", NoticeKind.BLOCKED)


def _block_question(agent: AgentSession, reason: str, response: str | None) -> PromptBlocked:
    """Keep the marker and the hook's response in the history; the question goes nowhere."""
    response = response or DEFAULT_BLOCK_RESPONSE
    agent.history.append(Message("user", BLOCKED_MARKER.format(reason=reason)))
    agent.history.append(Message("assistant", response))
    return PromptBlocked(reason, response)


async def _model_loop(
    agent: AgentSession, question: str, context: tuple[str, ...], view: TurnView
) -> TurnOutcome:
    """Ask the model, run the tools it calls, until it answers without calling any."""
    for _ in range(agent.config.max_steps):
        compaction = await agent.compact_if_needed()
        if compaction is not None:
            show_notices(compaction, view)
        try:
            reply = await agent.model.complete(
                agent.model_messages(context), agent.tool_specs(), on_text=view.answer_text
            )
        except ModelError as exc:
            view.notice(f"model error: {exc}", NoticeKind.ERROR)
            agent.history.event("model_error", {"message": str(exc)})
            return TurnFailed(str(exc))
        if not reply.tool_calls:
            agent.history.append(Message("assistant", reply.text))
            return Answered(reply.text)
        await needs_loop()  # the tools, their hooks and the user's consent wait on it
        # Every call is screened before the reply is recorded, so that a redaction by a
        # preToolCall hook is all the history and later requests ever hold; each is
        # screened again right before it runs (`_run_tool_calls`).
        screened = [
            await screen_call(agent.gate, call, view) if isinstance(call, ToolCall) else call
            for call in apply_caps(reply.tool_calls, agent.gate.caps)
        ]
        calls = tuple(call.recorded for call in screened)
        agent.history.append(Message("assistant", reply.text, calls))
        stop_reason = await _run_tool_calls(agent, screened, view)
        if stop_reason is not None:
            return TurnFailed(f"stopped by a hook: {stop_reason}")
    message = f"stopped after {agent.config.max_steps} model calls without a final answer"
    view.notice(message, NoticeKind.ERROR)
    return TurnFailed(message)


async def _run_tool_calls(
    agent: AgentSession, calls: list[ScreenedCall | RefusedCall], view: TurnView
) -> str | None:
    """Run each call and record its result; a cancellation answers the calls left over,
    and so does a hook that stops the turn (its reason is returned).

    Each call after the first is screened again right before it runs: the calls before
    it may have changed what its arguments point at (a symlink, a file a guard reads).
    Every tool call in the history must be followed by its answer, or the next request
    of a resumed session is refused by the model server.
    """
    for index, call in enumerate(calls):
        try:
            done = await _run_one(agent, call, view, first=index == 0)
        except asyncio.CancelledError:
            _answer_left_over(agent, calls[index:], CANCELLED_TOOL_CALL)
            raise
        agent.history.append(Message("tool", done.result.content, tool_call_id=call.asked.id))
        if done.stop_reason is not None:
            _answer_left_over(agent, calls[index + 1 :], STOPPED_TOOL_CALL)
            return done.stop_reason
    return None


def _answer_left_over(
    agent: AgentSession, calls: list[ScreenedCall | RefusedCall], answer: str
) -> None:
    for unanswered in calls:
        agent.history.append(Message("tool", answer, tool_call_id=unanswered.asked.id))


async def _run_one(
    agent: AgentSession, call: ScreenedCall | RefusedCall, view: TurnView, *, first: bool
) -> CallOutcome:
    """Run a screened call (screened again unless it is the first); refuse one past a cap."""
    if isinstance(call, RefusedCall):
        result = ToolResult(call.message, is_error=True)
        view.tool_started(call.recorded)
        view.tool_finished(call.recorded, result)
        return CallOutcome(result)
    current = call if first else await rescreen(agent.gate, call, view)
    return await run_guarded(agent.gate, current, view)


async def _post_generation(
    agent: AgentSession, prompt: str, outcome: TurnOutcome, view: TurnView, continued: bool
) -> Outcome:
    """Run the postGeneration hooks; bounded by their own timeouts, not the turn's.

    Cancellations that land while they run, however many, let them finish first, then
    the turn is cancelled: an audit hook must not lose the turn it was writing down.
    """
    payload: dict[str, Any] = {
        "prompt": prompt,
        "answer": None,
        "outcome": _outcome_name(outcome),
        "continued": continued,
    }
    if isinstance(outcome, Answered):
        payload["answer"] = outcome.text
    elif isinstance(outcome, PromptBlocked):
        payload["answer"] = outcome.response
    if agent.engine.hooks_for("postGeneration"):
        await needs_loop()
    if not loop_running():  # no hook to run, and without a loop nothing can cancel it
        ended = await agent.engine.run("postGeneration", payload)
        show_notices(ended, view)
        return ended
    post = asyncio.ensure_future(agent.engine.run("postGeneration", payload))
    cancelled = False
    while not post.done():
        try:
            await asyncio.shield(post)
        except asyncio.CancelledError:
            cancelled = True  # remembered; raised once the hooks are done
    show_notices(post.result(), view)
    if cancelled:
        raise asyncio.CancelledError
    return post.result()


def _outcome_name(outcome: TurnOutcome) -> str:
    return {
        Answered: "answered",
        PromptBlocked: "blocked",
        TurnFailed: "error",
        Cancelled: "cancelled",
    }[type(outcome)]
