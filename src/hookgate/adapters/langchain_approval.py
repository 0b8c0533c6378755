"""The LangChain adapter's calls screened when the model asks for them, and a hook's
`ask` as LangChain's interrupt: what a person approves is the call as it will run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.config import get_config
from langgraph.types import interrupt

from hookgate.adapters.gate import ASK_DESCRIPTION, CallAllowed, CallDenied, refused, unasked

Screened = tuple[dict[str, Any], CallAllowed | CallDenied]
"""A call's arguments as it will run, and preToolCall's decision on it."""


def call_of(call: Mapping[str, Any]) -> tuple[str, dict[str, Any], str | None]:
    return call["name"], dict(call["args"]), call.get("id")


def calls_of(request: ModelRequest[Any], response: Any) -> list[Any]:
    """The calls of the model's answer to the agent's own tools (not a structured
    output's), each with its id."""
    if not isinstance(response, ModelResponse):
        return []
    tools = {tool.name for tool in request.tools if isinstance(tool, BaseTool)}
    return [
        call
        for message in response.result
        if isinstance(message, AIMessage)
        for call in message.tool_calls
        if call["name"] in tools and call.get("id")
    ]


def as_screened(response: Any, screened: Mapping[str, Screened]) -> Any:
    """The model's answer with each call a hook rewrote as it will run: what the history
    keeps, and what an approval middleware after this one shows a person."""
    if not isinstance(response, ModelResponse):
        return response
    messages: list[BaseMessage] = []
    for message in response.result:
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = [
                {**call, "args": screened[call["id"] or ""][0]} if call["id"] in screened else call
                for call in message.tool_calls
            ]
            if calls != message.tool_calls:
                message = message.model_copy(update={"tool_calls": calls})
        messages.append(message)
    return dataclasses.replace(response, result=messages)


def as_run(call: Mapping[str, Any], decision: CallAllowed | CallDenied) -> Screened:
    """The arguments `call` runs with as `decision` left them, and the decision."""
    if isinstance(decision, CallAllowed) and decision.rewritten:
        return dict(decision.arguments), decision
    return dict(call["args"]), decision


def approved(
    request: ToolCallRequest, decision: CallAllowed | CallDenied
) -> CallAllowed | CallDenied:
    """The decision once a person approved a call a hook asked about: LangChain's
    interrupt, in the shape of its human-in-the-loop middleware's (answered with
    `Command(resume={"decisions": [{"type": "approve"}]})`, or a `reject` with a
    `message`). Without a checkpointer nothing can resume the run: the call is denied."""
    if isinstance(decision, CallDenied) or not decision.asks:
        return decision
    if get_config().get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER) is None:
        return unasked()
    name = request.tool_call["name"]
    action = {"name": name, "args": decision.arguments, "description": ASK_DESCRIPTION}
    review = {"action_name": name, "allowed_decisions": ["approve", "reject"]}
    answer = interrupt({"action_requests": [action], "review_configs": [review]})
    decisions = answer.get("decisions") if isinstance(answer, dict) else None
    first = decisions[0] if isinstance(decisions, list) and decisions else {}
    if isinstance(first, dict) and first.get("type") == "approve":
        return decision
    return refused(first.get("message") if isinstance(first, dict) else None)
