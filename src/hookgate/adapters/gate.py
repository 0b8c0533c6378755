"""What every adapter asks the hooks, framework aside: a prompt screened, a tool call
screened, a result checked, a hand-off to another agent run, a turn finished. Each
answer is a small dataclass that an adapter maps onto its framework; the wording the
model reads is the runtime's own.

Only `hookgate.hooks` is used here: an adapter never needs the agent runtime.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from hookgate.hooks import HookEngine, HooksConfig, OnError, Outcome, load_hooks_file
from hookgate.hooks.wording import (
    BLOCKED_MARKER,
    DEFAULT_BLOCK_RESPONSE,
    DENIED_CALL,
    REFUSED_HANDOFF,
    STOPPED_CALL,
    UNCHECKED_MARKER,
    WITHHELD_RESULT,
)

#: The error subagentStop hooks read for a hand-off that raised instead of answering.
UNFINISHED_HANDOFF = "the hand-off did not finish"
#: What the model reads for a call a hook asked consent for, where the program wired no
#: way to ask anyone (as the runtime denies it with no terminal): it never runs.
UNASKED_CALL = (
    "[denied: a hook asked for consent and this program has no approval handler to ask anyone]"
)
#: What the model reads for a call the person asked refused.
REFUSED_CALL = "[denied by the user: {reason}]"
#: The interrupt's text for a person asked about a call.
ASK_DESCRIPTION = "A hook asks for your approval of this call, shown as it will run."
#: The arguments a hand-off tool's question may be in, first found first.
QUESTION_ARGUMENTS = ("question", "prompt", "input", "query", "request", "task")

TurnEnd = Literal["answered", "blocked", "error", "cancelled"]
HooksSource = str | os.PathLike[str] | HooksConfig | HookEngine
log = logging.getLogger("hookgate.adapters")
T = TypeVar("T")


@dataclass(frozen=True)
class PromptAllowed:
    prompt: str
    """The question as the hooks left it (rewritten or not)."""
    context: tuple[str, ...] = ()
    rewritten: bool = False


@dataclass(frozen=True)
class PromptBlocked:
    reason: str
    response: str
    """The answer in place of the model's."""

    @property
    def marker(self) -> str:
        return BLOCKED_MARKER.format(reason=self.reason)


@dataclass(frozen=True)
class CallAllowed:
    arguments: dict[str, Any]
    """The arguments the call runs with (a hook may have replaced them)."""
    context: tuple[str, ...] = ()
    rewritten: bool = False
    permission: str | None = None
    """A hook said `allow` (no consent needed) or `ask` (consent, always)."""
    call_id: str = ""
    """The model's id of the call, which postToolCall hooks read too."""

    @property
    def asks(self) -> bool:
        """A hook said `ask`: a person must approve the call, as it will run."""
        return self.permission == "ask"


@dataclass(frozen=True)
class CallDenied:
    message: str
    """What the model reads as the call's (error) result."""


@dataclass(frozen=True)
class CheckedResult:
    content: str
    is_error: bool
    replaced: bool = False
    """A hook replaced the result, or withheld it."""


@dataclass(frozen=True)
class AskAllowed:
    agent: str
    question: str
    """The question as preAsk left it."""
    arguments: dict[str, Any]
    """The tool's arguments with that question in place."""


@dataclass(frozen=True)
class AskRefused:
    message: str
    """What the model reads as the hand-off tool's (error) result."""


@dataclass(frozen=True)
class Answer:
    content: str
    is_error: bool
    replaced: bool = False
    """A postAsk hook replaced the answer."""


def question_argument(arguments: Mapping[str, Any]) -> str | None:
    """The argument of a hand-off tool that holds its question: the first of
    `QUESTION_ARGUMENTS`, else the only text argument, else None."""
    for key in QUESTION_ARGUMENTS:
        if isinstance(arguments.get(key), str):
            return key
    texts = [key for key, value in arguments.items() if isinstance(value, str)]
    return texts[0] if len(texts) == 1 else None


def hook_engine(source: HooksSource, *, session_id: str | None = None) -> HookEngine:
    """The engine for a hooks file (its directory is the hooks' project directory), a
    parsed config, or an engine the caller made (returned as is)."""
    if isinstance(source, HookEngine):
        return source
    session = session_id or str(uuid.uuid4())
    if isinstance(source, HooksConfig):
        return HookEngine(source, session_id=session)
    path = Path(source)
    return HookEngine(
        load_hooks_file(path), session_id=session, project_dir=str(path.parent.absolute())
    )


def unasked() -> CallDenied:
    """The denial of a call a hook asked consent for, with no one to ask."""
    return CallDenied(UNASKED_CALL)


def refused(reason: str | None) -> CallDenied:
    """The denial of a call the person asked did not approve."""
    return CallDenied(REFUSED_CALL.format(reason=reason or "not approved"))


def with_notes(content: str, context: tuple[str, ...]) -> str:
    """A tool result with the hooks' added context after it, as the runtime sends it."""
    if not context:
        return content
    return f"{content}\n\n[hook notes]\n" + "\n".join(context)


class Gate:
    """The hooks of one agent, asked the runtime's questions, async or sync.

    `agents` maps the name of each tool that hands off to another agent to that agent's
    name: such a call runs between preAsk and postAsk (`hand_off`)."""

    def __init__(
        self,
        source: HooksSource,
        *,
        session_id: str | None = None,
        agents: Mapping[str, str] | None = None,
    ) -> None:
        self.engine = hook_engine(source, session_id=session_id)
        self.agents = dict(agents or {})

    # preGeneration
    async def screen_prompt(self, prompt: str) -> PromptAllowed | PromptBlocked:
        return _prompt_decision(await self.engine.run("preGeneration", {"prompt": prompt}))

    def screen_prompt_sync(self, prompt: str) -> PromptAllowed | PromptBlocked:
        return _prompt_decision(self.engine.run_sync("preGeneration", {"prompt": prompt}))

    # preToolCall
    async def screen_call(
        self, tool: str, arguments: Mapping[str, Any], call_id: str | None
    ) -> CallAllowed | CallDenied:
        payload = _call_payload(tool, arguments, call_id)
        return _call_decision(await self.engine.run("preToolCall", payload))

    def screen_call_sync(
        self, tool: str, arguments: Mapping[str, Any], call_id: str | None
    ) -> CallAllowed | CallDenied:
        payload = _call_payload(tool, arguments, call_id)
        return _call_decision(self.engine.run_sync("preToolCall", payload))

    # postToolCall
    async def check_result(
        self, call: CallAllowed, tool: str, content: str, is_error: bool = False
    ) -> CheckedResult:
        """The result the model reads, with the context the call's hooks added."""
        payload = _result_payload(tool, call, content, is_error)
        return _checked(await self.engine.run("postToolCall", payload), call, content, is_error)

    def check_result_sync(
        self, call: CallAllowed, tool: str, content: str, is_error: bool = False
    ) -> CheckedResult:
        payload = _result_payload(tool, call, content, is_error)
        return _checked(self.engine.run_sync("postToolCall", payload), call, content, is_error)

    # preAsk, subagentStart / subagentStop, postAsk: a tool that hands off, inside its
    # pre- and postToolCall as the runtime's ask_agent.
    async def screen_ask(self, agent: str, arguments: Mapping[str, Any]) -> AskAllowed | AskRefused:
        return _ask_decision(agent, arguments, await self.engine.run(*_ask(agent, arguments)))

    async def agent_started(self, agent: str) -> None:
        _log_notices(await self.engine.run("subagentStart", {"agent": agent}))

    async def agent_stopped(self, agent: str, answer: str, error: str | None) -> None:
        _log_notices(await self.engine.run("subagentStop", _stop(agent, answer, error)))

    async def check_answer(self, ask: AskAllowed, answer: str, error: str | None) -> Answer:
        """What the asking model reads: the answer as postAsk left it, with its notes."""
        post = await self.engine.run("postAsk", _asked(ask, answer, error))
        return _answer(post, answer, error is not None)

    async def begin_ask(self, agent: str, arguments: Mapping[str, Any]) -> AskAllowed | AskRefused:
        """preAsk, then subagentStart if it allows the hand-off: `hand_off` up to the run."""
        screened = await self.screen_ask(agent, arguments)
        if isinstance(screened, AskAllowed):
            await self.agent_started(agent)
        return screened

    async def end_ask(self, ask: AskAllowed, answer: str, error: str | None) -> Answer:
        """subagentStop, then postAsk: `hand_off` after a run that answered (`error`: the
        answer of one that failed)."""
        await self.agent_stopped(ask.agent, answer, error)
        return await self.check_answer(ask, answer, error)

    async def hand_off(
        self,
        agent: str,
        arguments: Mapping[str, Any],
        run: Callable[[dict[str, Any]], Awaitable[tuple[str, bool]]],
    ) -> Answer:
        """Run a hand-off tool: `run(arguments)` runs the other agent and returns its
        answer and whether it failed. A refusal is answered without running it; a run
        that raises ends with subagentStop (UNFINISHED_HANDOFF) and no postAsk."""
        screened = await self.begin_ask(agent, arguments)
        if isinstance(screened, AskRefused):
            return Answer(screened.message, True)
        try:
            answer, is_error = await run(screened.arguments)
        except BaseException:
            await self.agent_stopped(agent, "", UNFINISHED_HANDOFF)
            raise
        return await self.end_ask(screened, answer, answer if is_error else None)

    def begin_ask_sync(self, agent: str, arguments: Mapping[str, Any]) -> AskAllowed | AskRefused:
        screened = _ask_decision(agent, arguments, self.engine.run_sync(*_ask(agent, arguments)))
        if isinstance(screened, AskAllowed):
            _log_notices(self.engine.run_sync("subagentStart", {"agent": agent}))
        return screened

    def agent_stopped_sync(self, agent: str, answer: str, error: str | None) -> None:
        _log_notices(self.engine.run_sync("subagentStop", _stop(agent, answer, error)))

    def end_ask_sync(self, ask: AskAllowed, answer: str, error: str | None) -> Answer:
        self.agent_stopped_sync(ask.agent, answer, error)
        post = self.engine.run_sync("postAsk", _asked(ask, answer, error))
        return _answer(post, answer, error is not None)

    # postGeneration
    async def finish(self, prompt: str, answer: str | None, outcome: TurnEnd) -> None:
        """Run the postGeneration hooks to the end, even under cancellation (which is
        raised again once they are done): an audit hook must not lose the turn."""
        task = asyncio.ensure_future(
            self.engine.run("postGeneration", _end(prompt, answer, outcome))
        )
        cancelled = False
        while not task.done():
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                cancelled = True
        _log_notices(task.result())
        if cancelled:
            raise asyncio.CancelledError

    async def run_turn(
        self,
        prompt: str,
        allowed: Callable[[PromptAllowed], Awaitable[T]],
        blocked: Callable[[PromptBlocked], Awaitable[T]],
        answer_of: Callable[[T], str | None],
    ) -> T:
        """One run between preGeneration and postGeneration: `allowed(decision)` runs it,
        `blocked(decision)` answers a blocked question, and postGeneration runs however
        it ends (answered, blocked, error, cancelled)."""
        try:
            decision = await self.screen_prompt(prompt)
        except asyncio.CancelledError:
            await self.finish(UNCHECKED_MARKER, None, "cancelled")
            raise
        if isinstance(decision, PromptBlocked):
            try:
                return await blocked(decision)
            finally:
                await self.finish(decision.marker, decision.response, "blocked")
        return await self.end_turn(decision, allowed, answer_of)

    async def end_turn(
        self,
        decision: PromptAllowed,
        allowed: Callable[[PromptAllowed], Awaitable[T]],
        answer_of: Callable[[T], str | None],
    ) -> T:
        """The run of an allowed question (`allowed(decision)`), postGeneration after it
        however it ends: the rest of `run_turn`, for a run resumed after an approval."""
        try:
            result = await allowed(decision)
        except asyncio.CancelledError:
            await self.finish(decision.prompt, None, "cancelled")
            raise
        except Exception:
            await self.finish(decision.prompt, None, "error")
            raise
        await self.finish(decision.prompt, answer_of(result), "answered")
        return result

    def finish_sync(self, prompt: str, answer: str | None, outcome: TurnEnd) -> None:
        _log_notices(self.engine.run_sync("postGeneration", _end(prompt, answer, outcome)))

    async def aclose(self) -> None:
        await self.engine.aclose()

    def close(self) -> None:
        self.engine.close()


def _prompt_decision(outcome: Outcome) -> PromptAllowed | PromptBlocked:
    _log_notices(outcome)
    if outcome.halted:
        reason = outcome.halt_reason or "blocked"
        return PromptBlocked(reason, outcome.response or DEFAULT_BLOCK_RESPONSE)
    return PromptAllowed(
        str(outcome.payload["prompt"]), outcome.context, rewritten="prompt" in outcome.changed
    )


def _call_payload(tool: str, arguments: Mapping[str, Any], call_id: str | None) -> dict[str, Any]:
    return {"tool": tool, "call_id": call_id or "", "arguments": dict(arguments)}


def _call_decision(outcome: Outcome) -> CallAllowed | CallDenied:
    _log_notices(outcome)
    if outcome.stop_reason is not None:
        return CallDenied(STOPPED_CALL.format(reason=outcome.stop_reason))
    if outcome.blocked:
        return CallDenied(DENIED_CALL.format(reason=outcome.reason))
    return CallAllowed(
        dict(outcome.payload["arguments"]),
        outcome.context,
        rewritten="arguments" in outcome.changed,
        permission=outcome.permission,
        call_id=str(outcome.payload.get("call_id", "")),
    )


def _result_payload(tool: str, call: CallAllowed, content: str, is_error: bool) -> dict[str, Any]:
    return {
        "tool": tool,
        "call_id": call.call_id,
        "arguments": dict(call.arguments),
        "result": {"content": content, "is_error": is_error},
    }


def _checked(outcome: Outcome, call: CallAllowed, content: str, is_error: bool) -> CheckedResult:
    """The result the model reads: withheld when a fail-safe hook failed on it (a
    scrubber that timed out must not let the raw result through), else as replaced."""
    _log_notices(outcome)
    for failure in outcome.errors:
        if failure.on_error is OnError.FAIL:
            return CheckedResult(WITHHELD_RESULT.format(hook=failure.hook), True, replaced=True)
    notes = call.context + outcome.context
    if "result" not in outcome.changed:
        return CheckedResult(with_notes(content, notes), is_error)
    result = outcome.payload["result"]
    return CheckedResult(with_notes(str(result["content"]), notes), bool(result["is_error"]), True)


def _ask(agent: str, arguments: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    key = question_argument(arguments)
    question = arguments[key] if key else json.dumps(dict(arguments), default=str)
    return "preAsk", {"agent": agent, "question": question, "conversation": []}


def _ask_decision(
    agent: str, arguments: Mapping[str, Any], outcome: Outcome
) -> AskAllowed | AskRefused:
    _log_notices(outcome)
    if outcome.halted:
        reason = outcome.halt_reason or f"blocked by hook {outcome.blocked_by!r}"
        text = REFUSED_HANDOFF.format(reason=reason)
        return AskRefused(f"{text}\n{outcome.response}" if outcome.response else text)
    question = str(outcome.payload["question"])
    key = question_argument(arguments)
    if "question" in outcome.changed and key is None:
        # Nowhere to put the rewrite: sending the question unrewritten would undo the hook.
        reason = "a hook rewrote the question, and the tool has no question argument to hold it"
        return AskRefused(REFUSED_HANDOFF.format(reason=reason))
    rewritten = {**arguments, key: question} if key else dict(arguments)
    return AskAllowed(agent, question, rewritten)


def _stop(agent: str, answer: str, error: str | None) -> dict[str, Any]:
    return {"agent": agent, "answer": answer, "error": error, "continued": False}


def _asked(ask: AskAllowed, answer: str, error: str | None) -> dict[str, Any]:
    return {"agent": ask.agent, "question": ask.question, "answer": answer, "error": error}


def _answer(outcome: Outcome, answer: str, is_error: bool) -> Answer:
    """What the asking model reads: the answer as postAsk left it, with its notes."""
    _log_notices(outcome)
    replaced = "answer" in outcome.changed
    content = str(outcome.payload["answer"]) if replaced else answer
    return Answer(with_notes(content, outcome.context), is_error, replaced)


def _end(prompt: str, answer: str | None, outcome: TurnEnd) -> dict[str, Any]:
    return {"prompt": prompt, "answer": answer, "outcome": outcome, "continued": False}


def _log_notices(outcome: Outcome) -> None:
    for notice in outcome.notices:
        log.warning("%s", notice)
