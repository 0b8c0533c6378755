"""hookgate's own session files (`$HOOKGATE_HOME/sessions/<id>.jsonl`, see `store/session.py`).

The model's calls as recorded (a call a hook redacted, as redacted), each with the
result the model read; a result in hookgate's denial wording was a denial.
"""

from __future__ import annotations

from pathlib import Path

from hookgate.messages import Message
from hookgate.policytest.replay.recorded import (
    RecordedCall,
    RecordedPrompt,
    Recording,
    is_marker,
    json_lines,
    prompt_with_answer,
)
from hookgate.tools import ToolResult

#: How a result the model read starts when the call did not run (`hooks/wording.py`,
#: `runtime/toolcall.py`): a denial by a hook, rule, guardrail or the user, or a stop.
_NOT_RUN = ("[denied", "[not run:", "[unknown tool")


def looks_like(first: object) -> bool:
    return isinstance(first, dict) and first.get("type") == "session" and "version" in first


def read(path: Path) -> Recording:
    items: list[RecordedCall | RecordedPrompt] = []
    calls: dict[str, int] = {}
    cwd = None
    for number, record in json_lines(path):
        if not isinstance(record, dict):
            continue
        if record.get("type") == "session":
            cwd = Path(str(record["cwd"])) if record.get("cwd") else None
            continue
        if record.get("type") != "message":
            continue
        try:
            message = Message.from_json(record["message"])
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        if message.role == "user" and not is_marker(message.content):
            items.append(RecordedPrompt(message.content, number))
        elif message.role == "assistant":
            for call in message.tool_calls:
                calls[call.id] = len(items)
                items.append(
                    RecordedCall(call.name, call.arguments, None, "unknown", number, call.name)
                )
            if not message.tool_calls and message.content:
                prompt_with_answer(items, message.content)
        elif message.role == "tool" and message.tool_call_id in calls:
            index = calls.pop(message.tool_call_id)
            recorded = items[index]
            assert isinstance(recorded, RecordedCall)
            denied = message.content.startswith(_NOT_RUN)
            items[index] = recorded._replace(
                result=None if denied else ToolResult(message.content),
                then="denied" if denied else "ran",
            )
    return Recording(str(path), "hookgate", cwd, items)
