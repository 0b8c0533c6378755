"""Claude Code's hook protocol, so that its hooks run unchanged (`format: claude`).

The input is Claude's per event (`hook_event_name`, `tool_name`, `tool_input`, …,
tools under Claude's names and shapes, see `claude_tools`). Exit 2 blocks with
stderr; exit 0 with stdout starting with `{` is Claude's JSON reply, other stdout is
context on UserPromptSubmit and SessionStart; any other exit is a hook failure,
which fails open (`onError: warn`) as in Claude Code. Default timeout 600 s
(UserPromptSubmit 30 s). The facts: docs/claude-code.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from hookgate.hooks.events import EventSpec, OnError
from hookgate.hooks.formats.base import (
    ALLOW,
    EXIT_BLOCK,
    BadReply,
    HookReply,
    Permission,
    check_exit,
    optional_text,
)
from hookgate.hooks.formats.claude_tools import (
    arguments_from_claude,
    claude_input,
    claude_response,
    claude_tool_name,
    compile_claude_matcher,
    result_from_claude,
)
from hookgate.hooks.process import ProcessResult

#: Claude Code's default timeouts, in seconds.
DEFAULT_TIMEOUT = 600.0
PROMPT_TIMEOUT = 30.0
#: Events whose plain (non-JSON) stdout is context for the model.
_PLAIN_IS_CONTEXT = ("UserPromptSubmit", "SessionStart")
_STOPS = ("Stop", "SubagentStop")
#: Events Claude Code never blocks: exit 2 or `decision: block` there is a notice.
_UNBLOCKABLE = ("SessionStart", "SubagentStart")
#: What `hookSpecificOutput` may hold, per event (besides `hookEventName`).
SPECIFIC_OUTPUT: Mapping[str, tuple[str, ...]] = {
    "PreToolUse": ("permissionDecision", "permissionDecisionReason", "updatedInput",
                   "additionalContext"),
    "PostToolUse": ("additionalContext", "updatedToolOutput", "updatedMCPToolOutput"),
    "UserPromptSubmit": ("additionalContext",),
    "SessionStart": ("additionalContext",),
}  # fmt: skip
#: Claude's `permission_mode` values hookgate's runtime has: asking as usual, no one
#: to ask (calls that need consent are denied), `yolo: true`.
PERMISSION_MODES = ("default", "dontAsk", "bypassPermissions")
_DECISIONS: Mapping[str, Permission | None] = {"allow": "allow", "ask": "ask", "defer": None}


def claude_event_name(event: EventSpec) -> str | None:
    """Claude Code's name of `event`, or None where it has none."""
    return event.aliases[0] if event.aliases else None


class ClaudeFormat:
    name = "claude"
    default_timeout = DEFAULT_TIMEOUT

    def supports(self, event: EventSpec) -> bool:
        return claude_event_name(event) is not None

    def timeout_for(self, event: EventSpec) -> float:
        return PROMPT_TIMEOUT if claude_event_name(event) == "UserPromptSubmit" else DEFAULT_TIMEOUT

    def on_error_for(self, event: EventSpec) -> OnError:
        return OnError.WARN  # Claude Code: a failing hook is a notice, the action proceeds

    def compile_matcher(self, text: str) -> re.Pattern[str] | None:
        return compile_claude_matcher(text)

    def match_name(self, name: str) -> str:
        return claude_tool_name(name)

    def environment(self, project_dir: str) -> dict[str, str]:
        return {"CLAUDE_PROJECT_DIR": project_dir, "CLAUDECODE": "1"}

    def encode(self, event: EventSpec, payload: Mapping[str, Any]) -> bytes:
        document = claude_payload(event, payload)
        # A lone surrogate (bytes kept by surrogateescape) becomes its JSON escape `\udcXX`.
        # Compact, as Claude Code sends it: scripts grep stdin for `"tool_name":"Bash"`.
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-8", "backslashreplace")

    def encode_pieces(self, event: EventSpec, payload: Mapping[str, Any]) -> Iterator[bytes]:
        """`encode`'s bytes in pieces, made as they are written (`pieces`)."""
        from hookgate.hooks.formats.pieces import json_pieces  # large events alone

        return json_pieces(claude_payload(event, payload))

    def decode(
        self, event: EventSpec, payload: Mapping[str, Any], result: ProcessResult
    ) -> HookReply:
        check_exit(result)
        name = claude_event_name(event) or ""
        if result.returncode == EXIT_BLOCK:
            reason = result.stderr.decode("utf-8", "replace").strip() or "no reason given"
            if name in _STOPS:
                return HookReply(go_on=reason)
            if name in _UNBLOCKABLE:
                return HookReply(message=reason)
            return HookReply(block=True, reason=reason)
        text = result.stdout.decode("utf-8", "replace").strip()
        if not text.startswith("{"):
            return HookReply(context=text) if text and name in _PLAIN_IS_CONTEXT else ALLOW
        try:
            reply = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise BadReply(f"stdout starts with '{{' but is not JSON: {exc}") from exc
        if not isinstance(reply, dict):
            raise BadReply("stdout starts with '{' but is not a JSON object")
        return reply_from_claude(event, payload, reply)


#: Event fields Claude Code's payload carries under hookgate's names, as they are.
_AS_THEY_ARE = ("source", "trigger", "custom_instructions", "message", "notification_type")


def claude_payload(event: EventSpec, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON object Claude Code writes to a hook's stdin for `event`."""
    name = claude_event_name(event) or ""
    cwd = str(payload.get("cwd", ""))
    document: dict[str, Any] = {
        "session_id": payload.get("session_id", ""),
        "transcript_path": payload.get("transcript_path", ""),
        "cwd": cwd,
        "hook_event_name": name,
        "permission_mode": payload.get("permission_mode") or "default",
    }
    asked = payload.get("asked")
    if isinstance(asked, Mapping) and asked.get("agent"):
        # Inside an asked agent, as inside Claude's subagent: who is running.
        document["agent_id"] = document["agent_type"] = asked["agent"]
    tool = str(payload.get("tool", ""))
    for passed in _AS_THEY_ARE:  # fields Claude Code names as hookgate does
        if passed in event.payload:
            document[passed] = payload.get(passed, "")
    if name == "UserPromptSubmit":
        document["prompt"] = payload.get("prompt", "")
    if name in ("PreToolUse", "PostToolUse"):
        arguments = payload.get("arguments") or {}
        document["tool_name"] = claude_tool_name(tool)
        document["tool_input"] = claude_input(tool, arguments, cwd)
        if name == "PostToolUse":
            document["tool_response"] = claude_response(tool, arguments, payload["result"], cwd)
        document["tool_use_id"] = payload.get("call_id", "")
    if name in ("SubagentStart", "SubagentStop"):
        document["agent_id"] = document["agent_type"] = payload.get("agent", "")
    if name in _STOPS:
        document["stop_hook_active"] = bool(payload.get("continued", False))
        document["last_assistant_message"] = payload.get("answer") or ""
    if name in ("TaskCreated", "TaskCompleted"):
        task = payload.get("task") or {}
        document.update(
            task_id=task.get("id", ""), task_subject=task.get("subject", ""),
            task_description=task.get("description", ""),
        )  # fmt: skip
    if name in ("TeammateIdle", "TaskCreated", "TaskCompleted"):
        document.update(teammate_name=payload.get("agent", ""), team_name=payload.get("team", ""))
    return document


def reply_from_claude(
    event: EventSpec, payload: Mapping[str, Any], reply: Mapping[str, Any]
) -> HookReply:
    """A Claude JSON reply as hookgate's decision; raises `BadReply` for what cannot apply."""
    name = claude_event_name(event) or ""
    specific = _specific(name, reply.get("hookSpecificOutput"))
    decision = reply.get("decision")
    if decision not in (None, "approve", "block"):
        raise BadReply(f'\'decision\' must be "approve" or "block", got {decision!r}')
    reason = optional_text(reply, "reason")
    fields: dict[str, Any] = {
        "message": optional_text(reply, "systemMessage"),
        "context": optional_text(specific, "additionalContext", "hookSpecificOutput."),
        "stop": (optional_text(reply, "stopReason") or "stopped by a hook")
        if reply.get("continue") is False
        else None,
    }
    if name in _STOPS:
        if decision == "block" and not reason:
            raise BadReply(f"a {name} 'decision: block' needs a 'reason': the next instruction")
        return HookReply(go_on=reason if decision == "block" else None, **fields)
    if name == "PreToolUse":
        return _pre_tool_use(payload, specific, decision, reason, fields)
    changes: dict[str, Any] = {}
    output = specific.get("updatedToolOutput", specific.get("updatedMCPToolOutput"))
    if output is not None:
        changes["result"] = result_from_claude(str(payload.get("tool")), output, payload["result"])
    if decision == "block" and name in _UNBLOCKABLE:
        fields["message"] = fields["message"] or reason or f"{name} cannot be blocked"
        decision = None
    block = decision == "block"
    return HookReply(block=block, reason=reason if block else None, changes=changes, **fields)


def _pre_tool_use(
    payload: Mapping[str, Any],
    specific: Mapping[str, Any],
    decision: Any,
    reason: str | None,
    fields: dict[str, Any],
) -> HookReply:
    permission = specific.get("permissionDecision")
    if permission is None and decision is not None:
        permission = "allow" if decision == "approve" else "deny"  # the legacy spelling
    if permission is not None and permission != "deny" and permission not in _DECISIONS:
        raise BadReply(
            f"'permissionDecision' must be allow, deny, ask or defer, got {permission!r}"
        )
    reason = optional_text(specific, "permissionDecisionReason", "hookSpecificOutput.") or reason
    changes: dict[str, Any] = {}
    if "updatedInput" in specific:
        tool, cwd = str(payload.get("tool", "")), str(payload.get("cwd", ""))
        original = payload.get("arguments") or {}
        changes["arguments"] = arguments_from_claude(tool, specific["updatedInput"], original, cwd)
    if permission == "deny":
        return HookReply(block=True, reason=reason, changes=changes, **fields)
    return HookReply(
        permission=_DECISIONS.get(permission) if permission else None,
        reason=reason,
        changes=changes,
        **fields,
    )


def _specific(name: str, value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadReply(f"'hookSpecificOutput' must be an object, got {type(value).__name__}")
    said = value.get("hookEventName", name)
    if said != name:
        raise BadReply(f"hookSpecificOutput.hookEventName is {said!r} in a {name} hook")
    allowed = SPECIFIC_OUTPUT.get(name, ())
    for key in value:
        if key != "hookEventName" and key not in allowed:
            can = ", ".join(allowed) or "nothing"
            raise BadReply(
                f"hookSpecificOutput.{key} has no effect on {name} here; it may set: {can}"
            )
    return value
