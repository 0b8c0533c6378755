"""A LangChain tool whose own return value is its result as the postToolCall hooks left
it. The hooks run inside the tool's run, before LangChain formats its message and calls
the tool's callbacks: `on_tool_end`, `astream_events`, tracers and the agent's state all
carry the result the hooks left (a redaction), never the raw one.

The tool is a copy of the agent's with its `_run` and `_arun` wrapped, so its argument
parsing, injected arguments, error handling and callbacks stay its own. The tool
messages the middleware makes (a denial, a rewritten call) are here too.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, cast

from langchain.agents.middleware import ToolCallRequest
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langchain_core.tools.base import _format_output, _handle_tool_error
from langgraph.types import Command

from hookgate.adapters.gate import CallAllowed, CallDenied, CheckedResult, Gate

ToolAnswer = ToolMessage | Command[Any]

Check = Callable[[str, bool], CheckedResult]
"""postToolCall on a result's text and whether it failed: the result the model reads."""
AsyncCheck = Callable[[str, bool], Awaitable[CheckedResult]]
#: The checked tool whose async run is running: its sync run inside it (a tool with no
#: coroutine, run in a thread) leaves the check to it (another tool's does not).
_CHECKING: ContextVar[BaseTool | None] = ContextVar("hookgate_checking", default=None)


def text_of(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else message.text


class Checks:
    """postToolCall on one call's result, sync or async, and the last result checked
    (None: the tool's run checked nothing, as for a failure LangChain handled)."""

    def __init__(self, gate: Gate, decision: CallAllowed, tool: str) -> None:
        self.gate, self.decision, self.tool = gate, decision, tool
        self.last: CheckedResult | None = None

    def check(self, text: str, is_error: bool) -> CheckedResult:
        self.last = self.gate.check_result_sync(self.decision, self.tool, text, is_error)
        return self.last

    async def acheck(self, text: str, is_error: bool) -> CheckedResult:
        self.last = await self.gate.check_result(self.decision, self.tool, text, is_error)
        return self.last


def checked_tool(
    tool: BaseTool, call_id: str, check: Check, acheck: AsyncCheck | None = None
) -> BaseTool:
    """`tool` with `check` applied to each result before anything sees it; run async,
    with `acheck` (LangChain runs a tool with no coroutine of its own in a thread,
    through its sync `_run`, which `check` then wraps)."""
    copy = _copy(tool)
    run = copy._run

    @functools.wraps(run)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if _CHECKING.get() is copy:  # inside `acheck`'s wrapper, which checks the result
            return run(*args, **kwargs)
        try:
            response = run(*args, **kwargs)
        except ToolException as exc:
            if not tool.handle_tool_error:
                raise
            return _failed(tool, check(_handled(tool, exc, call_id), True))
        text = _text(tool, response, call_id)
        return response if text is None else _answer(tool, response, text, check(text, False))

    object.__setattr__(copy, "_run", checked)
    if acheck is not None:
        object.__setattr__(copy, "_arun", _achecked(tool, copy, call_id, acheck))
    return copy


def checking(request: ToolCallRequest, check: Check, acheck: AsyncCheck) -> ToolCallRequest:
    """`request` with its tool checking its own result (`checked_tool`)."""
    if request.tool is None:
        return request
    checked = checked_tool(request.tool, request.tool_call["id"] or "", check, acheck)
    return request.override(tool=checked)


def _achecked(
    tool: BaseTool, copy: BaseTool, call_id: str, check: AsyncCheck
) -> Callable[..., Awaitable[Any]]:
    run = copy._arun

    @functools.wraps(run)
    async def checked(*args: Any, **kwargs: Any) -> Any:
        token = _CHECKING.set(copy)
        try:
            response = await run(*args, **kwargs)
        except ToolException as exc:
            if not tool.handle_tool_error:
                raise
            return _failed(tool, await check(_handled(tool, exc, call_id), True))
        finally:
            _CHECKING.reset(token)
        text = _text(tool, response, call_id)
        if text is None:
            return response
        return _answer(tool, response, text, await check(text, False))

    return checked


def _copy(tool: BaseTool) -> BaseTool:
    """A copy of `tool` that reports a `ToolException`'s text as its error message, as
    the copy raises one with a result the hooks left as a failure (the original's own
    handling, a fixed text or a function, is applied before the hooks see it)."""
    return tool.model_copy(update={"handle_tool_error": True} if tool.handle_tool_error else {})


def _text(tool: BaseTool, response: Any, call_id: str) -> str | None:
    """The text of `response` as the model reads it in the tool's message, or None where
    there is none to check: a malformed content-and-artifact pair (the tool reports that
    itself), or a message or `Command` of the tool's own."""
    content = response
    if tool.response_format == "content_and_artifact":
        if not isinstance(response, tuple) or len(response) != 2:
            return None
        content = response[0]
    message = _format_output(content, None, call_id or "-", tool.name, "success")
    return text_of(message) if isinstance(message, BaseMessage) else None


def _handled(tool: BaseTool, exc: ToolException, call_id: str) -> str:
    """The error text the tool's own `handle_tool_error` makes of `exc`."""
    content = _handle_tool_error(exc, flag=cast("Any", tool.handle_tool_error))
    message = _format_output(content, None, call_id or "-", tool.name, "error")
    return text_of(message) if isinstance(message, BaseMessage) else str(content)


def _answer(tool: BaseTool, response: Any, text: str, checked: CheckedResult) -> Any:
    """The tool's response as the hooks left it (unchanged where they changed nothing)."""
    if checked.is_error and tool.handle_tool_error:
        raise ToolException(checked.content)
    if checked.content == text and not checked.replaced:
        return response
    if tool.response_format == "content_and_artifact":
        return checked.content, response[1]
    return checked.content


def _failed(tool: BaseTool, checked: CheckedResult) -> Any:
    """A handled failure as the hooks left it: still a failure, or an answer."""
    if checked.is_error:
        raise ToolException(checked.content)
    return (
        (checked.content, None)
        if tool.response_format == "content_and_artifact"
        else (checked.content)
    )


def arguments_of(request: ToolCallRequest) -> dict[str, Any]:
    return dict(request.tool_call["args"])


def with_args(request: ToolCallRequest, arguments: dict[str, Any]) -> ToolCallRequest:
    if arguments == request.tool_call["args"]:
        return request
    return request.override(tool_call={**request.tool_call, "args": arguments})


def rewritten(request: ToolCallRequest, decision: CallAllowed) -> ToolCallRequest:
    if not decision.rewritten:
        return request
    return request.override(tool_call={**request.tool_call, "args": decision.arguments})


def denied(decision: CallDenied, name: str, call_id: str | None) -> ToolMessage:
    return ToolMessage(
        content=decision.message, tool_call_id=call_id or "", name=name, status="error"
    )


def result_of(answer: ToolMessage) -> tuple[str, bool]:
    return text_of(answer), answer.status == "error"


def as_checked(answer: ToolMessage, checked: CheckedResult) -> ToolMessage:
    """The tool's message with the result the hooks left (a redaction, a failure)."""
    if checked.content == text_of(answer) and not checked.replaced:
        return answer
    status = "error" if checked.is_error else "success"
    return answer.model_copy(update={"content": checked.content, "status": status})
