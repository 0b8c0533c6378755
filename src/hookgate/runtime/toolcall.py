"""The one wrapper every tool call passes through, built-in, MCP or hand-off.

preToolCall → permission policy → consent → the tool → postToolCall. A hook may
say `allow` (no consent prompt, never past a deny rule) or `ask` (the prompt, even
under yolo), or stop the whole turn. A denied call
answers the model as text and the turn goes on; a hook's replaced arguments run but
are not written back into the history, except on a call the hook also denied: that
is a redaction, and the hook's arguments replace the model's wherever the call is
shown or recorded. A replaced result is what the model and the user both see; a
result a fail-safe postToolCall hook failed on is withheld from both, as is one a
guardrail blocked. A call a guardrail blocked may pass it once (`runtime/approvals.py`). A
file tool call past the workspace needs consent like a call that changes things.
"""

from __future__ import annotations

import json
from typing import Any

from hookgate.hooks import HookEngine, HookSpec, OnError, Outcome
from hookgate.hooks.records import NamedTuple
from hookgate.hooks.wording import (
    DENIED_CALL,
    GUARDRAIL_PREFIX,
    OBJECTED,
    STOPPED_CALL,
    WITHHELD_RESULT,
)
from hookgate.messages import ToolCall
from hookgate.runtime.approvals import Approvals, ApproveMode, GuardrailBlock, blocking_guardrail
from hookgate.runtime.caps import CallCaps
from hookgate.runtime.consent import (
    AlwaysDeny,
    Consent,
    ConsentRequest,
    call_line,
    hook_asks,
    waits_for_user,
)
from hookgate.security.policy import Decision, Policy, Verdict, rules_allowing, why_no_rule_covers
from hookgate.tools import ToolContext, ToolRegistry, ToolResult
from hookgate.tools.paths import leaves_workspace
from hookgate.view import MarkKind, MarksToolCalls, NoticeKind, ToolMark, TurnView

#: What the model reads for a call that needed consent when there was no one to ask.
NOT_ASKED_RESULT = "[denied: this call needs consent and no one was asked (no terminal)]"
#: The caps of a gate built without any: the agent file's defaults.
DEFAULT_CAPS = CallCaps()


class ToolGate:
    """Everything a guarded tool call needs; immutable.

    A plain class rather than a NamedTuple: each gate needs `Approvals` of its own,
    which a NamedTuple's default would share between them; nor a dataclass, whose
    module imports `inspect` at every start (tests/frontends/test_startup_imports.py).
    """

    __slots__ = ("approvals", "asker", "caps", "consent", "context", "engine", "policy", "tools")

    engine: HookEngine
    tools: ToolRegistry
    policy: Policy
    consent: Consent
    context: ToolContext
    caps: CallCaps
    asker: Consent | None
    """Who is asked when a hook says `ask`: the front end's own consent, which `yolo`
    does not replace (None: `consent`)."""
    approvals: Approvals
    """Guardrail blocks, and the calls the user let past one, once."""

    def __init__(
        self,
        engine: HookEngine,
        tools: ToolRegistry,
        policy: Policy,
        consent: Consent,
        context: ToolContext,
        caps: CallCaps = DEFAULT_CAPS,
        asker: Consent | None = None,
        approvals: Approvals | None = None,
    ) -> None:
        object.__setattr__(self, "engine", engine)
        object.__setattr__(self, "tools", tools)
        object.__setattr__(self, "policy", policy)
        object.__setattr__(self, "consent", consent)
        object.__setattr__(self, "context", context)
        object.__setattr__(self, "caps", caps)
        object.__setattr__(self, "asker", asker)
        object.__setattr__(self, "approvals", Approvals() if approvals is None else approvals)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ToolGate is immutable: cannot set {name!r}")


class ScreenedCall(NamedTuple):
    """A tool call after its preToolCall hooks: their verdict, and what to record."""

    asked: ToolCall
    """The call as the model asked for it."""
    recorded: ToolCall
    """The call as the history, later requests and the user see it: the model's,
    unless a hook denied it and replaced its arguments (a redaction)."""
    pre: Outcome
    skipped: tuple[HookSpec, ...] = ()
    """The guardrail the user approved this call past, once."""


async def screen_call(
    gate: ToolGate,
    call: ToolCall,
    view: TurnView,
    skip: tuple[HookSpec, ...] | None = None,
    shown: tuple[str, ...] = (),
) -> ScreenedCall:
    """Run the preToolCall hooks of `call`, before the call is recorded anywhere.

    A call identical to one the user approved past a guardrail skips that guardrail
    (this once); a call a guardrail blocks now may be approved at once where the front
    end asks (ACP), else it gets an id to approve later, or none (`-p`). The hooks'
    notices in `shown` (said when the call was first screened) are not said again.
    """
    announce = skip is None  # a rescreen does not say the approval again
    if skip is None:
        skip = gate.approvals.take(gate.engine, call.name, call.arguments)
    pre = await _pre_tool_call(gate, call, skip, view, announce=announce, shown=shown)
    guard = blocking_guardrail(gate.engine, "preToolCall", pre.blocked_by) if pre.blocked else None
    if guard is not None:
        block = gate.approvals.blocked(call.name, call.arguments, guard, pre.reason or "")
        if await _approved_at_once(gate, block, view):
            skip = (*skip, guard)
            pre = await _pre_tool_call(gate, call, skip, view, announce=True)
    recorded = call
    if pre.blocked and "arguments" in pre.changed:
        recorded = ToolCall(call.id, call.name, pre.payload["arguments"])
    return ScreenedCall(call, recorded, pre, skip)


async def _pre_tool_call(
    gate: ToolGate,
    call: ToolCall,
    skip: tuple[HookSpec, ...],
    view: TurnView,
    *,
    announce: bool,
    shown: tuple[str, ...] = (),
) -> Outcome:
    pre = await gate.engine.run(
        "preToolCall",
        {"tool": call.name, "call_id": call.id, "arguments": dict(call.arguments)},
        skip=skip,
    )
    for hook in skip if announce else ():
        view.notice(f"{call.name} call passes guardrail {hook.name.removeprefix(GUARDRAIL_PREFIX)!r} "
                    "this once: you approved it; every other hook and rule still applies",
                    NoticeKind.CHANGED)  # fmt: skip
    show_notices(pre, view, shown)
    return pre


async def _approved_at_once(gate: ToolGate, block: GuardrailBlock, view: TurnView) -> bool:
    """Say the block; where the front end asks (ACP), whether the user let it through."""
    said = f"guardrail {block.rule!r} blocked the {block.tool} call: {block.reason}"
    approvals = gate.approvals
    if approvals.mode is ApproveMode.ASK and approvals.ask is not None:
        await notify_waiting(
            gate, view, f"hookgate asks whether to let the {block.tool} call past {block.rule!r}"
        )
        if await approvals.ask(block):
            approvals.approve(block.id, "permission request", now=True)
            return True
        view.notice(said, NoticeKind.DENIED)
    elif approvals.mode is ApproveMode.COMMAND:
        view.notice(f"{said} (/approve {block.id} lets this exact call through once)",
                    NoticeKind.DENIED)  # fmt: skip
    else:
        view.notice(f"{said} (no way around it here, as in -p: line mode and editors can "
                    "approve it once; or change the guardrails' rules)", NoticeKind.DENIED)  # fmt: skip
    return False


async def rescreen(gate: ToolGate, screened: ScreenedCall, view: TurnView) -> ScreenedCall:
    """Screen a call again right before it runs, on the state the calls before it left.

    The first screen decided what is recorded (a redaction stays the record); this one
    decides whether and how the call runs. A call already denied is not asked again.
    """
    if screened.pre.blocked:
        return screened
    again = await screen_call(
        gate, screened.asked, view, skip=screened.skipped, shown=screened.pre.notices
    )
    return ScreenedCall(screened.asked, screened.recorded, again.pre, screened.skipped)


class CallOutcome(NamedTuple):
    """A call's result for the model, and whether a hook stopped the whole turn."""

    result: ToolResult
    stop_reason: str | None = None


async def run_screened(gate: ToolGate, screened: ScreenedCall, view: TurnView) -> ToolResult:
    """`run_guarded`, for a caller that has no turn to stop."""
    return (await run_guarded(gate, screened, view)).result


async def run_guarded(gate: ToolGate, screened: ScreenedCall, view: TurnView) -> CallOutcome:
    """Run a screened call with every other rule applied.

    The view sees every call, denied ones too, and the result the user may see; the
    model gets that result plus any context the hooks added.
    """
    view.tool_started(screened.recorded)
    result, context, stop = await _guarded_call(gate, screened, view)
    view.tool_finished(screened.recorded, result)
    if context:
        result = ToolResult(
            f"{result.content}\n\n[hook notes]\n" + "\n".join(context), result.is_error
        )
    return CallOutcome(result, stop)


async def call_tool(gate: ToolGate, call: ToolCall, view: TurnView) -> ToolResult:
    """Screen and run one tool call: `screen_call`, then `run_screened`."""
    return await run_screened(gate, await screen_call(gate, call, view), view)


async def _guarded_call(
    gate: ToolGate, screened: ScreenedCall, view: TurnView
) -> tuple[ToolResult, tuple[str, ...], str | None]:
    """The call's result, the hooks' context for the model, and a hook's stop reason."""
    call, pre = screened.asked, screened.pre
    if pre.stop_reason is not None:
        return (
            ToolResult(STOPPED_CALL.format(reason=pre.stop_reason), is_error=True),
            (),
            pre.stop_reason,
        )
    refusal = await _refusal(gate, screened, view)
    if refusal is not None:
        return refusal, (), None
    tool = gate.tools.get(call.name)
    assert tool is not None  # `_refusal` answers a call to an unknown tool
    arguments = pre.payload["arguments"]
    if "arguments" in pre.changed:
        runs = f"runs {call_line(call.name, arguments)}"  # what runs, not what was asked
        _mark(view, screened, MarkKind.REWRITTEN, pre.changed_by.get("arguments", "a hook"), runs)
    result = await tool.run(arguments, gate.context)
    post = await gate.engine.run(
        "postToolCall",
        {"tool": call.name, "call_id": call.id, "arguments": arguments, "result": result.to_json()},
    )
    show_notices(post, view)
    if (withheld := _withheld(post)) is not None:
        # Not post.context either: a failure's reason may quote the hook's stderr.
        return withheld, pre.context, post.stop_reason
    # A guardrail changes a result only to withhold it; its own notice said so, and its
    # reason is in the result.
    if guard := blocking_guardrail(gate.engine, "postToolCall", post.changed_by.get("result")):
        _mark(view, screened, MarkKind.REPLACED, guard.name, post.payload["result"]["content"])
        return ToolResult(**post.payload["result"]), pre.context, post.stop_reason
    if "result" in post.changed:
        view.notice(f"the result of {call.name} was replaced by a hook", NoticeKind.CHANGED)
        _mark(view, screened, MarkKind.REPLACED, post.changed_by.get("result", "a hook"), "")
    return ToolResult(**post.payload["result"]), pre.context + post.context, post.stop_reason


async def _refusal(gate: ToolGate, screened: ScreenedCall, view: TurnView) -> ToolResult | None:
    """Why the call must not run: a hook, an unknown tool, a deny rule or the user."""
    call, pre = screened.asked, screened.pre
    if pre.blocked and blocking_guardrail(gate.engine, "preToolCall", pre.blocked_by):
        rule = (pre.blocked_by or "").removeprefix(GUARDRAIL_PREFIX)
        _mark(view, screened, MarkKind.DENIED, pre.blocked_by or "a guardrail", pre.reason or "")
        return ToolResult(
            f"[denied by guardrail {rule!r}: {pre.reason}]", is_error=True, denied=True
        )
    if pre.blocked:
        _mark(view, screened, MarkKind.DENIED, pre.blocked_by or "a hook", pre.reason or "")
        return ToolResult(DENIED_CALL.format(reason=pre.reason), is_error=True, denied=True)
    tool = gate.tools.get(call.name)
    if tool is None:
        known = ", ".join(gate.tools.names())
        return ToolResult(f"[unknown tool {call.name!r}; tools: {known}]", is_error=True)
    arguments = pre.payload["arguments"]
    # The policy judges what the model asked for; a hook's rewrite is trusted as is. A
    # file tool reaching past the workspace asks, reads included: what it opens counts.
    needs_consent = tool.needs_consent or leaves_workspace(call.name, arguments, gate.context)
    decision = gate.policy.judge(call.name, call.arguments, needs_consent=needs_consent)
    if decision.verdict is Verdict.DENY:
        # A rule that fired on what it cannot read says why: the model and the user
        # learn which construct to drop, not only which rule.
        why = f": {decision.reason}" if decision.reason else ""
        _mark(view, screened, MarkKind.DENIED, "permission rule", f"{decision.rule}{why}")
        return ToolResult(
            f"[denied by the permission rule {decision.rule!r}{why}]", is_error=True, denied=True
        )
    # A hook's `ask`, or an ask rule, asks the user even under yolo; a hook's `allow`
    # skips only the prompt a tool wants, never an ask rule's.
    consent = gate.consent
    if pre.permission == "ask" or (decision.verdict is Verdict.ASK and decision.rule):
        consent = gate.asker or gate.consent
    elif pre.permission == "allow" or decision.verdict is not Verdict.ASK:
        return None
    asked_by = (pre.permission_by or "a hook") if pre.permission == "ask" else ""
    request = ConsentRequest(
        call.name, arguments, rewritten="arguments" in pre.changed, reason=decision.reason or "",
        asked_by=asked_by, asked_why=(pre.permission_reason or "") if asked_by else "",
    )  # fmt: skip
    if waits_for_user(consent, request):
        await notify_waiting(gate, view, f"hookgate needs your permission to use {call.name}")
    if not await consent.ask(request):
        _mark(view, screened, MarkKind.DENIED, "user", "consent was refused")
        return _denied_by_consent(consent, call, view, _asker(request, decision))
    return None


def _asker(request: ConsentRequest, decision: Decision) -> str | None:
    """Who asks whatever rule allows the call: the hook, or the ask rule; None for a
    call that asks only because no rule allows it."""
    if request.asked_by:
        return hook_asks(request.asked_by, request.asked_why)
    if decision.verdict is Verdict.ASK and decision.rule:
        return f"the ask rule {decision.rule!r} asks for consent"
    return None


def _mark(view: TurnView, screened: ScreenedCall, kind: MarkKind, by: str, reason: str) -> None:
    if isinstance(view, MarksToolCalls):
        view.tool_marked(screened.recorded, ToolMark(kind, by, reason))


def _denied_by_consent(
    consent: Consent, call: ToolCall, view: TurnView, asker: str | None = None
) -> ToolResult:
    """A person said no; or there was no one to ask, and the user must learn which rule
    would let the call through next time (a notice, with or without `-v`); an ask rule
    or a hook (`asker`, which says so) asks whatever allows the call."""
    if not isinstance(consent, AlwaysDeny):
        return ToolResult("[denied by the user]", is_error=True, denied=True)
    if asker:
        advice = f"{asker}, whatever rule allows the call"
    elif rules := rules_allowing(call.name, call.arguments):
        advice = ("to allow it, add to permissions.allow in the agent file: "
                  f"{', '.join(json.dumps(r) for r in rules)}")  # fmt: skip
    else:
        why = why_no_rule_covers(call.name, call.arguments)
        advice = (
            f"no narrow permissions.allow rule covers it{f' ({why})' if why else ''}; "
            "run hookgate on a terminal to approve it"
        )
    view.notice(f"{call.name} call denied: it needs consent and there is no terminal to ask on; "
                f"{advice}", NoticeKind.DENIED)  # fmt: skip
    return ToolResult(NOT_ASKED_RESULT, is_error=True, denied=True)


def _withheld(post: Outcome) -> ToolResult | None:
    """The result in place of the tool's when a postToolCall hook under `onError: fail`
    failed: a scrubber that timed out must not let the raw result reach anyone."""
    for failure in post.errors:
        if failure.on_error is OnError.FAIL:
            return ToolResult(WITHHELD_RESULT.format(hook=failure.hook), is_error=True)
    return None


async def notify_waiting(gate: ToolGate, view: TurnView, message: str) -> None:
    """Run the `notification` hooks (Claude's Notification): hookgate waits for the user."""
    payload = {"message": message, "notification_type": "permission_prompt"}
    show_notices(await gate.engine.run("notification", payload), view)


def show_notices(outcome: Outcome, view: TurnView, shown: tuple[str, ...] = ()) -> None:
    """The hooks' lines for the user, but those in `shown`, said already; a hook that
    failed under `onError: warn` is an error."""
    failures = {str(failure) for failure in outcome.errors}
    # A guardrail that blocks a result replaces it (see modelcheck): its objection is
    # said as the withholding it was. Known by what the hook did, not by its name alone.
    guard = outcome.changed_by.get("result", "")
    withheld = (
        OBJECTED.format(hook=guard, reason="") if guard.startswith(GUARDRAIL_PREFIX) else None
    )
    for notice in outcome.notices:
        if notice in shown:
            continue
        if withheld is not None and notice.startswith(withheld):
            view.notice(f"{guard} withheld the result of the {outcome.payload.get('tool')} call: "
                        f"{notice.removeprefix(withheld)}", NoticeKind.DENIED)  # fmt: skip
        else:
            view.notice(notice, NoticeKind.ERROR if notice in failures else NoticeKind.INFO)
