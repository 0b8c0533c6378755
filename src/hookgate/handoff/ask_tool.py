"""The `ask_agent` tool: the model hands a question to another agent.

It is a tool like any other, so its call passes preToolCall, the permission policy
and the consent prompt first; `delegate` then runs preAsk and postAsk around the
hand-off. With `with_context` the conversation so far goes along, as a separate
field preAsk can rewrite. The answer is truncated into the tool output only after
postAsk has seen it whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hookgate.errors import ToolError
from hookgate.handoff.delegate import HandoffOutcome, Handoffs, Refused, delegate
from hookgate.hooks.wording import REFUSED_HANDOFF
from hookgate.messages import Message, ToolSpec
from hookgate.tools.base import ToolContext, ToolResult, check_arguments

#: Characters of an answer the asking model reads; the rest is cut with a note.
ANSWER_CAP = 32_000


class AskAgentTool:
    """`ask_agent(agent, question, with_context)`; needs consent like any tool that acts."""

    needs_consent = True

    def __init__(self, handoffs: Handoffs, conversation: Callable[[], Sequence[Message]]) -> None:
        self.handoffs = handoffs
        self._conversation = conversation
        self._spec = ToolSpec(
            name="ask_agent",
            description=(
                "Ask another agent a question and get its answer. It works on its own, "
                "with its own tools and rules; it does not see this conversation unless "
                "with_context is true. Agents:\n"
                + "\n".join(
                    f"- {ref.name}: {ref.description or '(no description)'}"
                    for ref in handoffs.agents.values()
                )
            ),
            parameters={
                "type": "object",
                "properties": {
                    "agent": {"type": "string", "enum": list(handoffs.agents)},
                    "question": {"type": "string", "description": "The question, complete."},
                    "with_context": {
                        "type": "boolean",
                        "default": False,
                        "description": "Send this conversation along with the question.",
                    },
                },
                "required": ["agent", "question"],
                "additionalProperties": False,
            },
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def run(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            args = check_arguments(self._spec.parameters, arguments)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        conversation = shared_conversation(self._conversation()) if args["with_context"] else []
        outcome = await delegate(self.handoffs, args["agent"], args["question"], conversation)
        return tool_result(outcome)


def shared_conversation(messages: Sequence[Message]) -> list[dict[str, str]]:
    """What `with_context` sends: the user's and the model's words, not tool output."""
    return [
        {"role": m.role, "content": m.content}
        for m in messages
        if m.role in ("user", "assistant") and m.content.strip()
    ]


def tool_result(outcome: HandoffOutcome) -> ToolResult:
    """The tool output the asking model reads: the answer, or why there is none."""
    if isinstance(outcome, Refused):
        text = REFUSED_HANDOFF.format(reason=outcome.reason)
        return ToolResult(f"{text}\n{outcome.response}" if outcome.response else text, True)
    parts = []
    if outcome.error is not None:
        parts.append(f"[the hand-off to {outcome.agent} failed: {outcome.error}]")
    if outcome.answer:
        parts.append(truncated_answer(outcome.answer))
    if outcome.context:
        parts.append("[hook notes]\n" + "\n".join(outcome.context))
    return ToolResult("\n\n".join(parts) or "[no answer]", is_error=outcome.error is not None)


def truncated_answer(answer: str) -> str:
    """`answer` as a model reads it: cut at `ANSWER_CAP` characters, with a note."""
    if len(answer) <= ANSWER_CAP:
        return answer
    return f"{answer[:ANSWER_CAP]}\n[answer truncated: {ANSWER_CAP} of {len(answer)} characters]"
