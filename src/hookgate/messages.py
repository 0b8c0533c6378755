"""The conversation as the runtime keeps it: messages, tool calls, tool specs.

Immutable records (`NamedTuple`s) with a JSON form (`to_json`/`from_json`) used by
the session file and the model clients alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from hookgate.hooks.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias

Role: TypeAlias = "Literal['system', 'user', 'assistant', 'tool']"


class ToolCall(NamedTuple):
    """One call the model asked for; `arguments` is the decoded JSON object."""

    id: str
    name: str
    arguments: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": dict(self.arguments)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolCall:
        return cls(id=str(data["id"]), name=str(data["name"]), arguments=dict(data["arguments"]))


class Message(NamedTuple):
    """One message of the conversation, in the chat-completions sense."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [call.to_json() for call in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        return cls(
            role=data["role"],
            content=str(data.get("content") or ""),
            tool_calls=tuple(ToolCall.from_json(c) for c in data.get("tool_calls", ())),
            tool_call_id=data.get("tool_call_id"),
        )


class ToolSpec(NamedTuple):
    """What the model is told about a tool: its name, purpose and JSON Schema."""

    name: str
    description: str
    parameters: Mapping[str, Any] = MappingProxyType({"type": "object"})


class ModelReply(NamedTuple):
    """One model answer: text, tool calls, or both."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
