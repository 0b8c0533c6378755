"""The one wrapper every tool call passes through, built-in, MCP or hand-off.

preToolCall → permission policy → consent → the tool → postToolCall. A denied call
answers the model as text and the turn goes on; a hook's replaced arguments run but
are not written back into the history; a replaced result is what the model and the
user both see.
"""

from __future__ import annotations

from dataclasses import dataclass

from hookgate.consent import Consent, ConsentRequest
from hookgate.hooks import HookEngine, Outcome
from hookgate.messages import ToolCall
from hookgate.policy import Policy, Verdict
from hookgate.tools import ToolContext, ToolRegistry, ToolResult
from hookgate.view import TurnView


@dataclass(frozen=True)
class ToolGate:
    """Everything a guarded tool call needs."""

    engine: HookEngine
    tools: ToolRegistry
    policy: Policy
    consent: Consent
    context: ToolContext


async def call_tool(gate: ToolGate, call: ToolCall, view: TurnView) -> ToolResult:
    """Run one tool call the model asked for, with every rule applied.

    The view sees every call, denied ones too, and the result the user may see;
    the model gets that result plus any context the hooks added.
    """
    view.tool_started(call)
    result, context = await _guarded_call(gate, call, view)
    view.tool_finished(call, result)
    if context:
        result = ToolResult(
            f"{result.content}\n\n[hook notes]\n" + "\n".join(context), result.is_error
        )
    return result


async def _guarded_call(
    gate: ToolGate, call: ToolCall, view: TurnView
) -> tuple[ToolResult, tuple[str, ...]]:
    pre = await gate.engine.run(
        "preToolCall", {"tool": call.name, "arguments": dict(call.arguments)}
    )
    show_notices(pre, view)
    if pre.blocked:
        return ToolResult(f"[denied by a hook: {pre.reason}]", is_error=True), ()
    tool = gate.tools.get(call.name)
    if tool is None:
        known = ", ".join(gate.tools.names())
        return ToolResult(f"[unknown tool {call.name!r}; tools: {known}]", is_error=True), ()
    arguments = pre.payload["arguments"]
    # The policy judges what the model asked for; a hook's rewrite is trusted as is.
    decision = gate.policy.judge(call.name, call.arguments, needs_consent=tool.needs_consent)
    if decision.verdict is Verdict.DENY:
        return ToolResult(f"[denied by the permission rule {decision.rule!r}]", is_error=True), ()
    if decision.verdict is Verdict.ASK:
        request = ConsentRequest(call.name, arguments, rewritten="arguments" in pre.changed)
        if not await gate.consent.ask(request):
            return ToolResult("[denied by the user]", is_error=True), ()
    result = await tool.run(arguments, gate.context)
    post = await gate.engine.run(
        "postToolCall", {"tool": call.name, "arguments": arguments, "result": result.to_json()}
    )
    show_notices(post, view)
    if "result" in post.changed:
        view.notice(f"the result of {call.name} was replaced by a hook")
    return ToolResult(**post.payload["result"]), pre.context + post.context


def show_notices(outcome: Outcome, view: TurnView) -> None:
    for notice in outcome.notices:
        view.notice(notice)
