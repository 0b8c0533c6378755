"""hookgate's hooks inside a Claude Agent SDK session, as the SDK's own hook callbacks:

    options = ClaudeAgentOptions(hooks=hookgate_hooks("hookgate.yaml"), ...)

UserPromptSubmit runs preGeneration (block, context), PreToolUse preToolCall (deny,
rewrite), PostToolUse postToolCall (replace), Stop postGeneration. Claude's tool names
and arguments are mapped to hookgate's (`Bash` is `shell`) as the `claude` format maps
them. The SDK cannot rewrite a question: a hook's rewrite blocks it instead, and
set-up warns. A call of the `Agent` (formerly `Task`) tool is a hand-off: preAsk
after preToolCall in PreToolUse (refuse, rewrite the `prompt`), postAsk before
postToolCall in PostToolUse (replace the answer), and SubagentStart / SubagentStop run
subagentStart / subagentStop. Every matcher fails closed (`on_failure="block"`) where the SDK allows it.
A run that ends in an error or a cancellation runs no Stop: `async with hooks.guard():`
around the query runs postGeneration then.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from claude_agent_sdk import HookMatcher

from hookgate.adapters.gate import (
    AskAllowed,
    AskRefused,
    CallAllowed,
    CallDenied,
    Gate,
    HooksSource,
    PromptBlocked,
    TurnEnd,
)
from hookgate.hooks import BadReply
from hookgate.hooks.formats.claude_tools import (
    CLAUDE_TOOL_NAMES,
    arguments_from_claude,
    claude_input,
    claude_response,
    result_from_claude,
)
from hookgate.hooks.wording import UNCHECKED_MARKER

#: The reason a question is blocked when a hook rewrote it: the SDK can only block.
REWRITE_BLOCKED = (
    "a hook rewrote the question, and the Claude Agent SDK cannot send a rewritten "
    "question; it was blocked instead"
)
#: The error postAsk reads for a hand-off preAsk allowed that never ran.
NOT_RUN = "the hand-off did not run: refused after its hooks, or the turn ended first"
#: Added to each matcher's timeout beyond the sum of its hooks' own timeouts.
TIMEOUT_MARGIN = 5.0
_HOOKGATE_NAMES = {claude: ours for ours, claude in CLAUDE_TOOL_NAMES.items()} | {
    "Task": "ask_agent"  # the Agent tool's former name
}
#: The agent the `Agent` tool runs when the model names none (Claude Code's default).
DEFAULT_SUBAGENT = "general-purpose"
Callback = Callable[[Any, str | None, Any], Awaitable[dict[str, Any]]]


class CannotRewritePrompt(UserWarning):
    """preGeneration hooks are configured, and the SDK cannot send a rewritten question."""


def hookgate_hooks(source: HooksSource, *, session_id: str | None = None) -> HookgateHooks:
    """`ClaudeAgentOptions.hooks` running the hooks of `source` (a hooks file, a parsed
    config or an engine)."""
    return HookgateHooks(Gate(source, session_id=session_id))


class HookgateHooks(dict[str, list[HookMatcher]]):
    """The SDK's hook matchers, one per event hookgate maps, in a dict the SDK takes."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self._prompts: dict[str, str] = {}
        """Per Claude session: the question of the turn whose postGeneration is pending."""
        self._asks: dict[str, AskAllowed] = {}
        """Per `Agent` tool call: the hand-off preAsk allowed, for its postAsk."""
        self._submitted = 0
        """How many questions reached UserPromptSubmit."""
        super().__init__(
            UserPromptSubmit=[self._matcher("preGeneration", self._user_prompt_submit, True)],
            PreToolUse=[self._matcher("preToolCall", self._pre_tool_use, True)],
            PostToolUse=[self._matcher("postToolCall", self._post_tool_use, True)],
            PostToolUseFailure=[self._matcher("postAsk", self._post_tool_use_failure, False)],
            Stop=[self._matcher("postGeneration", self._stop, False)],
            SubagentStart=[self._matcher("subagentStart", self._subagent_start, False)],
            SubagentStop=[self._matcher("subagentStop", self._subagent_stop, False)],
        )
        if gate.engine.hooks_for("preGeneration"):
            warnings.warn(
                "the Claude Agent SDK cannot rewrite a question: a preGeneration hook's "
                "rewrite blocks the question instead",
                CannotRewritePrompt,
                stacklevel=3,
            )

    @contextlib.asynccontextmanager
    async def guard(self) -> AsyncIterator[None]:
        """Run postGeneration for a turn that ends in an error or a cancellation (the
        CLI's Stop does not fire then), also one that fails before its question reached
        the hooks (the CLI would not start): postGeneration reads the unchecked marker."""
        before = self._submitted
        try:
            yield
        except asyncio.CancelledError:
            await self._finish_pending("cancelled", unasked=self._submitted == before)
            raise
        except Exception:
            await self._finish_pending("error", unasked=self._submitted == before)
            raise

    async def _finish_pending(self, outcome: TurnEnd, *, unasked: bool) -> None:
        await self._close_asks()
        if unasked and not self._prompts:
            await self.gate.finish(UNCHECKED_MARKER, None, outcome)
        while self._prompts:
            _, prompt = self._prompts.popitem()
            await self.gate.finish(prompt, None, outcome)

    async def _close_asks(self) -> None:
        """postAsk for each hand-off preAsk allowed that never ran: the CLI refused the
        call after its hooks (its own permission check), or the turn ended first."""
        while self._asks:
            _, asked = self._asks.popitem()
            await self.gate.check_answer(asked, "", NOT_RUN)

    def _matcher(self, event: str, callback: Callback, fail_closed: bool) -> HookMatcher:
        budget = sum(hook.timeout for hook in self.gate.engine.hooks_for(event))
        return HookMatcher(
            matcher=None,
            hooks=[callback],  # type: ignore[list-item]  # the SDK's input is a union
            timeout=budget + TIMEOUT_MARGIN,
            on_failure="block" if fail_closed else None,
        )

    async def _user_prompt_submit(
        self, data: Any, tool_use_id: str | None, _: Any
    ) -> dict[str, Any]:
        self._submitted += 1
        decision = await self.gate.screen_prompt(str(data.get("prompt", "")))
        if not isinstance(decision, PromptBlocked) and decision.rewritten:
            decision = PromptBlocked(REWRITE_BLOCKED, REWRITE_BLOCKED)
        if isinstance(decision, PromptBlocked):
            await self.gate.finish(decision.marker, decision.response, "blocked")
            return {"decision": "block", "reason": decision.reason}
        self._prompts[str(data.get("session_id", ""))] = decision.prompt
        return _specific("UserPromptSubmit", decision.context)

    async def _pre_tool_use(self, data: Any, tool_use_id: str | None, _: Any) -> dict[str, Any]:
        tool, arguments = _ours(data)
        decision = await self.gate.screen_call(tool, arguments, tool_use_id)
        if isinstance(decision, CallDenied):
            return _deny(decision.message)
        if tool == "ask_agent":
            asked = await self.gate.screen_ask(_subagent(decision.arguments), decision.arguments)
            if isinstance(asked, AskRefused):
                return _deny(asked.message)
            self._asks[tool_use_id or ""] = asked
            if asked.arguments != decision.arguments:
                decision = dataclasses.replace(decision, arguments=asked.arguments, rewritten=True)
        reply = _specific("PreToolUse", decision.context)
        if decision.rewritten:
            # The CLI applies updatedInput only with a decision: `ask` keeps the user's
            # (or can_use_tool's) say, unless a hook said `allow` itself.
            reply["hookSpecificOutput"].update(
                permissionDecision="allow" if decision.permission == "allow" else "ask",
                updatedInput=_theirs(tool, decision.arguments, data),
            )
        return reply

    async def _post_tool_use(self, data: Any, tool_use_id: str | None, _: Any) -> dict[str, Any]:
        tool, arguments = _ours(data)
        result = original = _result(tool, data.get("tool_response"))
        asked = self._asks.pop(tool_use_id or "", None)
        if asked is not None:  # postAsk, then postToolCall, as around ask_agent
            error = result["content"] if result["is_error"] else None
            answer = await self.gate.check_answer(asked, result["content"], error)
            result = {"content": answer.content, "is_error": answer.is_error}
        call = CallAllowed(arguments, call_id=tool_use_id or "")
        checked = await self.gate.check_result(call, tool, result["content"], result["is_error"])
        if not checked.replaced and result == original:
            return {}
        replaced = {"content": checked.content, "is_error": checked.is_error}
        output = claude_response(tool, arguments, replaced, str(data.get("cwd", os.getcwd())))
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": output}}

    async def _post_tool_use_failure(
        self, data: Any, tool_use_id: str | None, _: Any
    ) -> dict[str, Any]:
        """A hand-off that failed: postAsk reads the error, as the runtime's does. What the
        model reads then is the CLI's error: a hook's answer or context cannot replace it."""
        asked = self._asks.pop(tool_use_id or "", None)
        if asked is not None:
            await self.gate.check_answer(asked, "", str(data.get("error") or "the tool failed"))
        return {}

    async def _subagent_start(self, data: Any, tool_use_id: str | None, _: Any) -> dict[str, Any]:
        await self.gate.agent_started(str(data.get("agent_type") or DEFAULT_SUBAGENT))
        return {}

    async def _subagent_stop(self, data: Any, tool_use_id: str | None, _: Any) -> dict[str, Any]:
        agent = str(data.get("agent_type") or DEFAULT_SUBAGENT)
        await self.gate.agent_stopped(agent, str(data.get("last_assistant_message") or ""), None)
        return {}

    async def _stop(self, data: Any, tool_use_id: str | None, _: Any) -> dict[str, Any]:
        await self._close_asks()
        prompt = self._prompts.pop(str(data.get("session_id", "")), "")
        await self.gate.finish(prompt, data.get("last_assistant_message"), "answered")
        return {}


def _deny(message: str) -> dict[str, Any]:
    output = {"permissionDecision": "deny", "permissionDecisionReason": message}
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **output}}


def _subagent(arguments: dict[str, Any]) -> str:
    return str(arguments.get("agent") or DEFAULT_SUBAGENT)


def _specific(event: str, context: tuple[str, ...]) -> dict[str, Any]:
    output: dict[str, Any] = {"hookEventName": event}
    if context:
        output["additionalContext"] = "\n\n".join(context)
    return {"hookSpecificOutput": output}


def _ours(data: Any) -> tuple[str, dict[str, Any]]:
    """The call as hookgate names it: `Bash`'s `command` is `shell`'s. Arguments with no
    hookgate counterpart keep Claude's names, so a hook still sees them."""
    claude_name = str(data.get("tool_name", ""))
    tool = _HOOKGATE_NAMES.get(claude_name, claude_name)
    cwd = str(data.get("cwd", os.getcwd()))
    arguments: dict[str, Any] = {}
    for key, value in dict(data.get("tool_input") or {}).items():
        try:
            arguments.update(arguments_from_claude(tool, {key: value}, {}, cwd))
        except BadReply:
            arguments[key] = value
    return tool, arguments


def _theirs(tool: str, arguments: dict[str, Any], data: Any) -> dict[str, Any]:
    """hookgate's arguments back in Claude's names: the whole input, as the CLI wants."""
    cwd = str(data.get("cwd", os.getcwd()))
    updated: dict[str, Any] = {}
    for key, value in arguments.items():
        updated.update(claude_input(tool, {key: value}, cwd) or {key: value})
    return updated


def _result(tool: str, response: Any) -> dict[str, Any]:
    try:
        return result_from_claude(tool, response, None)
    except BadReply:
        return {"content": json.dumps(response, default=str), "is_error": False}
