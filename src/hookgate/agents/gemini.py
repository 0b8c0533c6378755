"""Gemini CLI's hooks, answered by hookgate (`hookgate hook gemini`).

Gemini CLI's SessionStart, BeforeAgent, BeforeTool, AfterTool and AfterAgent are
hookgate's sessionStart, preGeneration, preToolCall, postToolCall and postGeneration.
Its tools have names of their own (`run_shell_command` is `shell`, `replace` is
`edit_file`), mapped both ways by `TOOLS`. The reply is `decision: deny` + `reason`
(a denied call, a replaced or withheld result, a blocked question, a turn sent on),
`hookSpecificOutput.tool_input` (a rewritten call) and `additionalContext`. Gemini
CLI cannot stop at SessionStart nor take a consent request from a hook: those are
shown to the user, and an `ask` is denied. Facts: docs/agents.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hookgate.agents.claude import ASK_DENIED, REWRITE_BLOCKED
from hookgate.agents.protocol import AgentEvent, HookSettings, Reply
from hookgate.hooks import OnError, Outcome
from hookgate.hooks.files.digest import sha256
from hookgate.hooks.wording import STOPPED_CALL, WITHHELD_RESULT

EVENTS: Mapping[str, str] = {
    "SessionStart": "sessionStart",
    "BeforeAgent": "preGeneration",
    "BeforeTool": "preToolCall",
    "AfterTool": "postToolCall",
    "AfterAgent": "postGeneration",
}
#: Gemini CLI's tools: hookgate's name, and Gemini's argument names to hookgate's.
TOOLS: Mapping[str, tuple[str, Mapping[str, str]]] = {
    "run_shell_command": ("shell", {"command": "command"}),
    "read_file": ("read_file", {"file_path": "path"}),
    "write_file": ("write_file", {"file_path": "path", "content": "content"}),
    "replace": ("edit_file", {"file_path": "path", "old_string": "old_string",
                              "new_string": "new_string", "allow_multiple": "replace_all"}),
    "glob": ("list_files", {"pattern": "pattern", "dir_path": "path"}),
    "grep_search": ("grep", {"pattern": "pattern", "dir_path": "path", "include_pattern": "glob"}),
    "search_file_content": ("grep", {"pattern": "pattern", "dir_path": "path",
                                     "include_pattern": "glob"}),
    "web_fetch": ("web_fetch", {"prompt": "prompt"}),
}  # fmt: skip
#: What the user reads where a sessionStart hook blocked: Gemini CLI starts regardless.
START_NOT_STOPPED = "a sessionStart hook blocked, and Gemini CLI cannot stop at start: {reason}"


class GeminiCli:
    """Gemini CLI's hook protocol (an `AgentProtocol`)."""

    name = "gemini"
    project_env = "GEMINI_PROJECT_DIR"

    def parse(self, given: Mapping[str, Any], environ: Mapping[str, str]) -> AgentEvent | None:
        native = str(given.get("hook_event_name", ""))
        event = EVENTS.get(native)
        if event is None:
            return None
        cwd = str(given.get("cwd") or environ.get("GEMINI_CWD") or ".")
        return AgentEvent(
            agent=self.name, native=native, event=event, payload=_payload(event, given),
            session_id=str(given.get("session_id") or "unnamed"), cwd=cwd,
            project_dir=environ.get(self.project_env) or cwd, given=given,
            transcript_path=given.get("transcript_path") or None,
        )  # fmt: skip

    def reply(self, event: AgentEvent, outcome: Outcome) -> Reply:
        answer: dict[str, Any] = {}
        specific: dict[str, Any] = {}
        notices = list(outcome.notices)
        if outcome.stop_reason is not None:
            answer |= {"continue": False, "stopReason": outcome.stop_reason}
        reason = _decision(event, outcome, specific)
        if reason is not None and event.native == "SessionStart":
            notices.append(START_NOT_STOPPED.format(reason=reason))
        elif reason is not None:
            answer |= {"decision": "deny", "reason": reason}
        if outcome.context and event.native in ("BeforeAgent", "AfterTool", "SessionStart"):
            specific["additionalContext"] = "\n".join(outcome.context)
        elif outcome.context:  # nowhere for the model to read it here: the user does
            notices += outcome.context
        if notices:
            answer["systemMessage"] = "\n".join(notices)
        if specific:
            answer["hookSpecificOutput"] = {"hookEventName": event.native, **specific}
        return Reply(stdout=json.dumps(answer, ensure_ascii=False) + "\n" if answer else "")

    def refuse(self, event: AgentEvent, reason: str) -> Reply:
        answer: dict[str, Any] = {"systemMessage": reason}
        if event.native == "AfterAgent":
            answer |= {"continue": False, "stopReason": reason}
        elif event.native != "SessionStart":
            answer |= {"decision": "deny", "reason": reason}
        return Reply(stdout=json.dumps(answer, ensure_ascii=False) + "\n")

    def notice(self, event: AgentEvent, text: str) -> Reply:
        return Reply(stdout=json.dumps({"systemMessage": text}, ensure_ascii=False) + "\n")


def _payload(event: str, given: Mapping[str, Any]) -> dict[str, Any]:
    if event == "sessionStart":
        return {"source": str(given.get("source", "startup"))}
    if event == "preGeneration":
        return {"prompt": str(given.get("prompt", ""))}
    if event == "postGeneration":
        return {"prompt": str(given.get("prompt", "")), "answer": given.get("prompt_response"),
                "outcome": "answered", "continued": bool(given.get("stop_hook_active"))}  # fmt: skip
    name = str(given.get("tool_name", ""))
    tool_input = given.get("tool_input")
    raw = dict(tool_input) if isinstance(tool_input, dict) else {}
    tool, names = TOOLS.get(name, (name, {}))
    payload = {"tool": tool, "call_id": _call_id(name, raw),
               "arguments": {names.get(key, key): value for key, value in raw.items()}}  # fmt: skip
    if event == "postToolCall":
        payload["result"] = _result(given.get("tool_response"))
    return payload


def _decision(event: AgentEvent, outcome: Outcome, specific: dict[str, Any]) -> str | None:
    """The reason Gemini CLI's `decision: deny` carries, if any; a rewrite into `specific`."""
    native = event.native
    failed = [f.hook for f in outcome.errors if f.on_error is OnError.FAIL]
    if native == "BeforeTool":
        if outcome.stop_reason is not None:
            return STOPPED_CALL.format(reason=outcome.stop_reason)
        if outcome.blocked:
            return outcome.reason or "blocked by a hook"
        if outcome.permission == "ask":
            return ASK_DENIED.format(agent="Gemini CLI")
        if "arguments" in outcome.changed:
            specific["tool_input"] = _gemini_arguments(event, outcome.payload["arguments"])
    elif native == "AfterTool" and failed:
        return WITHHELD_RESULT.format(hook=failed[0])
    elif native == "AfterTool" and "result" in outcome.changed:
        return str(outcome.payload["result"].get("content", ""))  # replaces the result
    elif native in ("BeforeAgent", "SessionStart") and outcome.blocked:
        return outcome.reason or "blocked by a hook"
    elif native == "BeforeAgent" and "prompt" in outcome.changed:
        return REWRITE_BLOCKED.format(agent="Gemini CLI", prompt=outcome.payload["prompt"])
    elif native == "AfterAgent" and outcome.continue_with is not None:
        return outcome.continue_with
    return None


def _gemini_arguments(event: AgentEvent, arguments: Mapping[str, Any]) -> dict[str, Any]:
    names = TOOLS.get(str(event.given.get("tool_name", "")), ("", {}))[1]
    theirs = {ours: gemini for gemini, ours in names.items()}
    return {theirs.get(key, key): value for key, value in arguments.items()}


def _result(response: Any) -> dict[str, Any]:
    if not isinstance(response, dict):
        return {"content": "" if response is None else str(response), "is_error": False}
    content = response.get("llmContent", response.get("returnDisplay", ""))
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"content": text, "is_error": bool(response.get("error"))}


def _call_id(tool: str, arguments: Mapping[str, Any]) -> str:
    """An id Gemini CLI does not give: the same for BeforeTool and AfterTool of a call."""
    text = json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False)
    return "gemini_" + sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:24]


def settings() -> HookSettings:
    """Where Gemini CLI reads hooks, and the entries `hookgate install gemini` writes."""
    return HookSettings(
        agent="gemini",
        events=tuple(EVENTS),
        tool_events=(),  # no matcher: every tool
        project_file=".gemini/settings.json",
        user_file=".gemini/settings.json",
        timeout=600_000,  # milliseconds
        approve=(
            "Gemini CLI runs a project's hooks only in a folder you trust, and asks before "
            "a hook it has not seen: approve 'hookgate' there (/hooks panel)."
        ),
        hook_name="hookgate",
    )


PROTOCOL = GeminiCli
