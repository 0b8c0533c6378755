"""Claude Code's hooks, answered by hookgate (`hookgate hook claude`).

Claude Code's SessionStart, UserPromptSubmit, PreToolUse, PostToolUse and Stop are
hookgate's sessionStart, preGeneration, preToolCall, postToolCall and postGeneration;
tools and their arguments are mapped as the `claude` hook format maps them (`Bash` is
`shell`, `file_path` is `path`). The reply is Claude Code's JSON on stdout, exit 0.
What Claude Code cannot express is done the nearest safe way: a rewritten question
blocks it, a sessionStart block stops the session. Facts: docs/agents.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from hookgate.agents.protocol import AgentEvent, HookSettings, Reply
from hookgate.hooks import BadReply, OnError, Outcome
from hookgate.hooks.formats.claude_tools import (
    claude_input,
    claude_response,
    hookgate_tool_name,
    input_as_arguments,
    result_from_claude,
)
from hookgate.hooks.wording import STOPPED_CALL, WITHHELD_RESULT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Claude Code's events hookgate answers, with hookgate's names.
EVENTS: Mapping[str, str] = {
    "SessionStart": "sessionStart",
    "UserPromptSubmit": "preGeneration",
    "PreToolUse": "preToolCall",
    "PostToolUse": "postToolCall",
    "Stop": "postGeneration",
}
#: Why a call a hook asked consent for is denied where the agent takes no `ask`.
ASK_DENIED = "a hook asked for your consent, and {agent} cannot ask it from a hook: denied"
#: What the model reads for a result a hook replaced where the agent cannot replace it.
REPLACED = "a hook replaced this result; read this instead of it: {text}"
#: Why a question a hook rewrote is blocked: Claude Code cannot send another question.
REWRITE_BLOCKED = (
    "a hook rewrote the question, and {agent} cannot send a rewritten question; "
    "it was blocked instead: {prompt}"
)


class ClaudeCode:
    """Claude Code's hook protocol (an `AgentProtocol`); agents that adopted it (Codex)
    subclass it and say what they cannot take."""

    name = "claude"
    title = "Claude Code"
    project_env = "CLAUDE_PROJECT_DIR"
    #: The `permissionDecision`s besides `deny` the agent takes from a hook.
    permissions: tuple[str, ...] = ("allow", "ask")
    #: The `permissionDecision` an `updatedInput` must come with, if any.
    rewrite_decision: str | None = None
    #: Whether PostToolUse may replace a tool's result (`updatedToolOutput`).
    replaces_output = True

    def parse(self, given: Mapping[str, Any], environ: Mapping[str, str]) -> AgentEvent | None:
        native = str(given.get("hook_event_name", ""))
        event = EVENTS.get(native)
        if event is None:
            return None
        cwd = str(given.get("cwd") or environ.get("PWD") or ".")
        return AgentEvent(
            agent=self.name, native=native, event=event, payload=_payload(event, given, cwd),
            session_id=str(given.get("session_id") or "unnamed"), cwd=cwd,
            project_dir=environ.get(self.project_env) or cwd, given=given,
            transcript_path=_text_or_none(given.get("transcript_path")),
            permission_mode=_text_or_none(given.get("permission_mode")),
        )  # fmt: skip

    def reply(self, event: AgentEvent, outcome: Outcome) -> Reply:
        answer: dict[str, Any] = {}
        specific: dict[str, Any] = {}
        if outcome.stop_reason is not None:
            answer |= {"continue": False, "stopReason": outcome.stop_reason}
        if outcome.notices:
            answer["systemMessage"] = "\n".join(outcome.notices)
        if event.native == "PreToolUse":
            self._decide_call(event, outcome, specific)
        elif event.native == "PostToolUse":
            self._decide_result(event, outcome, answer, specific)
        else:
            _decide(event, outcome, answer, self.title)
        if outcome.context and event.native != "Stop":
            specific["additionalContext"] = "\n".join(outcome.context)
        return _json_reply(event, answer, specific)

    def refuse(self, event: AgentEvent, reason: str) -> Reply:
        answer: dict[str, Any] = {"systemMessage": reason}
        specific: dict[str, Any] = {}
        if event.native == "PreToolUse":
            specific = {"permissionDecision": "deny", "permissionDecisionReason": reason}
        elif event.native == "PostToolUse":
            answer |= {"decision": "block", "reason": reason}
            if self.replaces_output:
                specific["updatedToolOutput"] = _withheld(event, "hookgate")
        elif event.native == "UserPromptSubmit":
            answer |= {"decision": "block", "reason": reason}
        else:  # SessionStart, Stop: nothing to block but the session itself
            answer |= {"continue": False, "stopReason": reason}
        return _json_reply(event, answer, specific)

    def notice(self, event: AgentEvent, text: str) -> Reply:
        return _json_reply(event, {"systemMessage": text}, {})

    def _decide_call(self, event: AgentEvent, outcome: Outcome, specific: dict[str, Any]) -> None:
        reason = outcome.reason or "blocked by a hook"
        if outcome.stop_reason is not None:
            reason = STOPPED_CALL.format(reason=outcome.stop_reason)
        elif not outcome.blocked and outcome.permission == "ask" and "ask" not in self.permissions:
            reason = ASK_DENIED.format(agent=self.title)  # no one can be asked: as `-p` does
        elif not outcome.blocked:
            if outcome.permission in self.permissions:
                specific["permissionDecision"] = outcome.permission
            if "arguments" in outcome.changed:
                specific["updatedInput"] = _updated_input(event, outcome)
                if self.rewrite_decision is not None:
                    specific["permissionDecision"] = self.rewrite_decision
            return
        specific |= {"permissionDecision": "deny", "permissionDecisionReason": reason}

    def _decide_result(
        self, event: AgentEvent, outcome: Outcome, answer: dict[str, Any], specific: dict[str, Any]
    ) -> None:
        failed = [f.hook for f in outcome.errors if f.on_error is OnError.FAIL]
        if outcome.blocked:
            answer |= {"decision": "block", "reason": outcome.reason or "blocked by a hook"}
        replaced: Any = None
        if failed:
            replaced = _withheld(event, failed[0])
        elif "result" in outcome.changed:
            replaced = _response(event, outcome.payload["result"])
        if replaced is not None and self.replaces_output:
            specific["updatedToolOutput"] = replaced
        elif replaced is not None:  # the nearest safe thing: block, the model reads why
            text = str(outcome.payload["result"].get("content", "")) if not failed else ""
            why = WITHHELD_RESULT.format(hook=failed[0]) if failed else REPLACED.format(text=text)
            answer |= {"decision": "block", "reason": why}


def _payload(event: str, given: Mapping[str, Any], cwd: str) -> dict[str, Any]:
    """hookgate's payload of `event` from Claude Code's input."""
    if event == "sessionStart":
        return {"source": str(given.get("source", "startup"))}
    if event == "preGeneration":
        return {"prompt": str(given.get("prompt", ""))}
    if event == "postGeneration":
        return {"prompt": "", "answer": given.get("last_assistant_message"),
                "outcome": "answered", "continued": bool(given.get("stop_hook_active"))}  # fmt: skip
    tool = hookgate_tool_name(str(given.get("tool_name", "")))
    tool_input = given.get("tool_input")
    arguments = input_as_arguments(tool, tool_input if isinstance(tool_input, dict) else {}, cwd)
    payload = {"tool": tool, "call_id": str(given.get("tool_use_id", "")), "arguments": arguments}
    if event == "postToolCall":
        payload["result"] = _result(tool, given.get("tool_response"))
    return payload


def _result(tool: str, response: Any) -> dict[str, Any]:
    try:
        return result_from_claude(tool, response, None)
    except BadReply:  # a shape the claude format does not know: its JSON, as text
        return {"content": json.dumps(response, ensure_ascii=False), "is_error": False}


def _decide(event: AgentEvent, outcome: Outcome, answer: dict[str, Any], title: str) -> None:
    """The decision of a prompt, a stop or a session start, into `answer`."""
    native, reason = event.native, outcome.reason or "blocked by a hook"
    if native == "UserPromptSubmit":
        if outcome.blocked:
            answer |= {"decision": "block", "reason": reason}
        elif "prompt" in outcome.changed:
            prompt = outcome.payload["prompt"]
            answer |= {
                "decision": "block",
                "reason": REWRITE_BLOCKED.format(agent=title, prompt=prompt),
            }
    elif native == "Stop" and outcome.continue_with is not None:
        answer |= {"decision": "block", "reason": outcome.continue_with}
    elif native == "SessionStart" and outcome.blocked:
        answer |= {"continue": False, "stopReason": reason}


def _updated_input(event: AgentEvent, outcome: Outcome) -> dict[str, Any]:
    """The whole `tool_input` Claude Code runs: the hooks' arguments in Claude's names,
    over what Claude sent that hookgate has no name for (a `description`)."""
    tool = str(outcome.payload["tool"])
    original = event.given.get("tool_input")
    base = dict(original) if isinstance(original, dict) else {}
    return base | claude_input(tool, outcome.payload["arguments"], event.cwd)


def _response(event: AgentEvent, result: Mapping[str, Any]) -> Any:
    tool = str(event.payload["tool"])
    return claude_response(tool, event.payload["arguments"], result, event.cwd)


def _withheld(event: AgentEvent, hook: str) -> Any:
    return _response(event, {"content": WITHHELD_RESULT.format(hook=hook), "is_error": True})


def _json_reply(event: AgentEvent, answer: dict[str, Any], specific: dict[str, Any]) -> Reply:
    if specific:
        answer["hookSpecificOutput"] = {"hookEventName": event.native, **specific}
    return Reply(stdout=json.dumps(answer, ensure_ascii=False) + "\n" if answer else "")


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def settings() -> HookSettings:
    """Where Claude Code reads hooks, and the entries `hookgate install claude` writes."""
    return HookSettings(
        agent="claude",
        events=tuple(EVENTS),
        tool_events=("PreToolUse", "PostToolUse"),
        project_file=".claude/settings.json",
        user_file=".claude/settings.json",
        timeout=600,  # seconds, Claude Code's default: hookgate's own timeouts hold first
        approve="Claude Code runs these hooks from the next session on; /hooks lists them.",
    )


PROTOCOL = ClaudeCode
