"""A stand-in for the Claude Code CLI on the SDK's transport: the SDK's real `query()`
and control protocol, with a script in the CLI's place (the CLI itself needs a 400 MB
binary and a model). The script asks the SDK's hook callbacks what the CLI would ask
them, over the wire messages the CLI would send, and acts on their answers the way the
CLI documents: a deny skips the tool, `updatedInput` with a decision replaces the
input, `updatedToolOutput` replaces the result, a failing callback under
`onFailure: block` blocks."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from claude_agent_sdk import Transport

SESSION = "claude-session-1"
Script = Callable[["ScriptedCLI", str], Awaitable[None]]


class ScriptedCLI(Transport):
    """The CLI's side of the stream-json protocol, run by `script(cli, prompt)`."""

    def __init__(self, script: Script, cwd: str) -> None:
        self.script = script
        self.cwd = cwd
        self.outbox: asyncio.Queue[dict[str, Any] | Exception | None] = asyncio.Queue()
        self.matchers: dict[str, list[dict[str, Any]]] = {}
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.ids = itertools.count()
        self.model_read: list[str] = []
        """What the model would have read: tool results, as the CLI passes them on."""
        self.ran: list[tuple[str, dict[str, Any]]] = []
        self.task: asyncio.Task[None] | None = None
        self.prompt_answers: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []
        """Every callback's answer as the CLI read it off the wire, with its event."""

    async def connect(self) -> None:
        pass

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        pass

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def write(self, data: str) -> None:
        message = json.loads(data)
        if message["type"] == "control_request" and message["request"]["subtype"] == "initialize":
            self.matchers = message["request"].get("hooks") or {}
            answer = {"hook_on_failure_supported": True, "hooks_applied": True}
            self.send(_control_response(message["request_id"], answer))
        elif message["type"] == "control_response":
            response = message["response"]
            self.pending.pop(response["request_id"]).set_result(response)
        elif message["type"] == "user":
            prompt = message["message"]["content"]
            self.task = asyncio.ensure_future(self._run(prompt))

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self.outbox.get()) is not None:
            if isinstance(message, Exception):
                raise message  # the CLI died
            yield message

    def send(self, message: dict[str, Any] | Exception | None) -> None:
        self.outbox.put_nowait(message)

    async def _run(self, prompt: str) -> None:
        try:
            await self.script(self, prompt)
        except Exception as exc:
            self.send(exc)
        finally:
            self.send(None)

    async def hook(self, event: str, fields: dict[str, Any]) -> list[dict[str, Any]]:
        """Ask every callback registered for `event`; a failure under onFailure: block
        reads as a block, as the CLI reads it."""
        answers = []
        data = {"session_id": SESSION, "transcript_path": "", "cwd": self.cwd,
                "hook_event_name": event, **fields}  # fmt: skip
        for matcher in self.matchers.get(event, []):
            for callback in matcher["hookCallbackIds"]:
                request_id = f"cli_{next(self.ids)}"
                future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
                self.pending[request_id] = future
                request = {"subtype": "hook_callback", "callback_id": callback, "input": data,
                           "tool_use_id": fields.get("tool_use_id")}  # fmt: skip
                self.send({"type": "control_request", "request_id": request_id, "request": request})
                response = await future
                if response["subtype"] == "error":
                    if matcher.get("onFailure") == "block":
                        answers.append({"decision": "block", "reason": response["error"]})
                    continue
                answers.append(response["response"])
                self.answers.append({"event": event, "answer": response["response"]})
        return answers

    async def prompt_allowed(self, prompt: str) -> bool:
        answers = await self.hook("UserPromptSubmit", {"prompt": prompt})
        self.prompt_answers = answers
        blocks = [a for a in answers if a.get("decision") == "block"]
        if blocks:
            self.result(f"blocked: {blocks[0].get('reason')}")
            return False
        return True

    async def tool(
        self, name: str, tool_input: dict[str, Any], run: Callable[[dict[str, Any]], Any]
    ) -> None:
        """One tool call as the CLI makes it: PreToolUse, the tool, PostToolUse."""
        use_id = f"toolu_{next(self.ids)}"
        fields = {"tool_name": name, "tool_input": tool_input, "tool_use_id": use_id}
        for answer in await self.hook("PreToolUse", fields):
            specific = answer.get("hookSpecificOutput", {})
            if specific.get("permissionDecision") == "deny" or answer.get("decision") == "block":
                self.model_read.append(specific.get("permissionDecisionReason") or answer["reason"])
                return
            if "updatedInput" in specific and specific.get("permissionDecision") in (
                "allow",
                "ask",
            ):
                tool_input = specific["updatedInput"]
        self.ran.append((name, tool_input))
        response = run(tool_input)
        if inspect.isawaitable(response):
            response = await response
        fields = {**fields, "tool_input": tool_input, "tool_response": response}
        for answer in await self.hook("PostToolUse", fields):
            response = answer.get("hookSpecificOutput", {}).get("updatedToolOutput", response)
        self.model_read.append(json.dumps(response))

    async def agent(self, tool_input: dict[str, Any], answer: str) -> None:
        """An `Agent` tool call as the CLI makes it: the sub-agent runs between
        SubagentStart and SubagentStop, and answers `answer`."""

        async def run(asked: dict[str, Any]) -> dict[str, Any]:
            fields = {"agent_id": "agent-1", "agent_type": asked.get("subagent_type", "")}
            await self.hook("SubagentStart", fields)
            await self.hook("SubagentStop", {**fields, "stop_hook_active": False,
                            "agent_transcript_path": "", "last_assistant_message": answer})  # fmt: skip
            return {"content": [{"type": "text", "text": answer}], "totalDurationMs": 1}

        await self.tool("Agent", tool_input, run)

    async def finish(self, answer: str) -> None:
        self.send({"type": "assistant", "message": {"role": "assistant", "model": "scripted",
                   "content": [{"type": "text", "text": answer}]}, "session_id": SESSION})  # fmt: skip
        await self.hook("Stop", {"stop_hook_active": False, "last_assistant_message": answer})
        self.result(answer)

    def result(self, text: str) -> None:
        self.send({"type": "result", "subtype": "success", "duration_ms": 1, "duration_api_ms": 1,
                   "is_error": False, "num_turns": 1, "session_id": SESSION, "result": text})  # fmt: skip


def _control_response(request_id: str, response: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    }
