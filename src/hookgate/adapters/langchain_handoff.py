"""A LangChain hand-off tool's call (a tool named in `agents=`), as the runtime's
ask_agent runs it: preAsk (which may rewrite the question) and subagentStart before the
tool runs; subagentStop, postAsk and postToolCall inside the tool's own run
(`checked_tool`), so that no callback or stream event carries an answer the hooks
replaced. A tool that raises ends with subagentStop (the hand-off did not finish); an
answer its run did not check (a message or `Command` of the tool's own) after it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langchain.agents.middleware import ToolCallRequest
from langchain_core.messages import ToolMessage

from hookgate.adapters.gate import (
    UNFINISHED_HANDOFF,
    AskAllowed,
    AskRefused,
    CallDenied,
    CheckedResult,
)
from hookgate.adapters.langchain_checked import (
    Checks,
    ToolAnswer,
    arguments_of,
    checking,
    denied,
    result_of,
    with_args,
)


class HandOffChecks:
    """subagentStop and postAsk on the other agent's answer, then postToolCall (`checks`)
    on the answer postAsk left: the hand-off's end, run at most once."""

    def __init__(self, checks: Checks, ask: AskAllowed) -> None:
        self.checks, self.ask = checks, ask
        self.ended = False

    def check(self, text: str, is_error: bool) -> CheckedResult:
        self.ended = True
        answer = self.checks.gate.end_ask_sync(self.ask, text, text if is_error else None)
        return self.checks.check(answer.content, answer.is_error)

    async def acheck(self, text: str, is_error: bool) -> CheckedResult:
        self.ended = True
        answer = await self.checks.gate.end_ask(self.ask, text, text if is_error else None)
        return await self.checks.acheck(answer.content, answer.is_error)


def hand_off_sync(
    agent: str,
    request: ToolCallRequest,
    checks: Checks,
    handler: Callable[[ToolCallRequest], ToolAnswer],
) -> ToolAnswer:
    """The hand-off tool's answer, its end run (postToolCall's result in `checks.last`
    for a message; none for a `Command`), or preAsk's refusal (the tool never run)."""
    gate = checks.gate
    screened = gate.begin_ask_sync(agent, arguments_of(request))
    if isinstance(screened, AskRefused):
        return _refused(request, screened)
    ends = HandOffChecks(checks, screened)
    try:
        answer = handler(checking(with_args(request, screened.arguments), ends.check, ends.acheck))
    except BaseException:
        if not ends.ended:
            gate.agent_stopped_sync(agent, "", UNFINISHED_HANDOFF)
        raise
    if not ends.ended:
        if isinstance(answer, ToolMessage):
            ends.check(*result_of(answer))
        else:
            gate.end_ask_sync(screened, "", None)
    return answer


async def hand_off(
    agent: str,
    request: ToolCallRequest,
    checks: Checks,
    handler: Callable[[ToolCallRequest], Awaitable[ToolAnswer]],
) -> ToolAnswer:
    """`hand_off_sync`, async."""
    gate = checks.gate
    screened = await gate.begin_ask(agent, arguments_of(request))
    if isinstance(screened, AskRefused):
        return _refused(request, screened)
    ends = HandOffChecks(checks, screened)
    request = checking(with_args(request, screened.arguments), ends.check, ends.acheck)
    try:
        answer = await handler(request)
    except BaseException:
        if not ends.ended:
            await gate.agent_stopped(agent, "", UNFINISHED_HANDOFF)
        raise
    if not ends.ended:
        if isinstance(answer, ToolMessage):
            await ends.acheck(*result_of(answer))
        else:
            await gate.end_ask(screened, "", None)
    return answer


def _refused(request: ToolCallRequest, refusal: AskRefused) -> ToolMessage:
    name, call_id = request.tool_call["name"], request.tool_call["id"]
    return denied(CallDenied(refusal.message), name, call_id)
