"""hookgate's hooks around a pydantic-ai agent, as one capability:

    Agent(model, tools=[...], capabilities=[hookgate_capability("hookgate.yaml")])

preGeneration and postGeneration around the run (`wrap_run`: a blocked question is
answered by the hook and never reaches the model; errors and cancellation end the run
through postGeneration too), the rewritten question and added context on the first
model request, and pre- and postToolCall around each tool's execution.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.abstract import WrapRunHandler, WrapToolExecuteHandler
from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
from pydantic_ai.messages import InstructionPart, ModelRequest, ToolCallPart, UserPromptPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.run import AgentRunResult
from pydantic_ai.tools import DeferredToolRequests, ToolDefinition

from hookgate.adapters.gate import (
    ASK_DESCRIPTION,
    CallAllowed,
    CallDenied,
    Gate,
    HooksSource,
    PromptAllowed,
    PromptBlocked,
    unasked,
)

#: The call's approval changed since the person approved it: it does not run.
CHANGED_SINCE_APPROVAL = "[denied: the hooks rewrote this call differently from the one approved]"


def hookgate_capability(
    source: HooksSource, *, session_id: str | None = None, agents: Mapping[str, str] | None = None
) -> HookgateCapability:
    """The capability running the hooks of `source` (a hooks file, a parsed config or an
    engine) around every run of the agent it is given to.

    `agents` maps each tool that calls another agent to that agent's name
    (`{"research": "researcher"}`): its calls also run preAsk, subagentStart,
    subagentStop and postAsk, inside pre- and postToolCall."""
    return HookgateCapability(Gate(source, session_id=session_id, agents=agents))


@dataclass
class HookgateCapability(AbstractCapability[Any]):
    """The hooks of one agent file at pydantic-ai's interception points."""

    gate: Gate
    question: PromptAllowed | None = field(default=None, repr=False)
    """This run's question as the hooks allowed it (each run has its own copy)."""
    decided: dict[str, CallAllowed | CallDenied] = field(default_factory=dict, repr=False)
    """preToolCall's decisions made when each call's arguments were validated, by call
    id, until it runs (shared by the runs of one capability: a deferred call runs in a
    later run)."""

    async def for_run(self, ctx: RunContext[Any]) -> HookgateCapability:
        return dataclasses.replace(self, question=None)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # built from a hooks file, not from an agent spec

    async def wrap_run(
        self, ctx: RunContext[Any], *, handler: WrapRunHandler
    ) -> AgentRunResult[Any]:
        async def allowed(decision: PromptAllowed) -> AgentRunResult[Any]:
            self.question = decision
            return await handler()

        async def blocked(decision: PromptBlocked) -> AgentRunResult[Any]:
            return AgentRunResult(output=decision.response)

        return await self.gate.run_turn(
            _prompt_text(ctx.prompt), allowed, blocked, lambda result: _answer(result.output)
        )

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """On the run's first request: the question as rewritten (kept in the history
        too), and the hooks' context as instructions for this run only."""
        question, self.question = self.question, None
        if question is None:
            return request_context
        if question.rewritten:
            _rewrite_question(ctx.messages, question.prompt)
            _rewrite_question(request_context.messages, question.prompt)
        if question.context:
            parameters = request_context.model_request_parameters
            notes = [InstructionPart(content=note) for note in question.context]
            request_context.model_request_parameters = dataclasses.replace(
                parameters, instruction_parts=[*(parameters.instruction_parts or []), *notes]
            )
        return request_context

    async def after_tool_validate(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        """preToolCall once the arguments are valid, before pydantic-ai defers a call for
        approval (a tool's `requires_approval`): a call a hook rewrote is, in the
        history too, the call the model made, so a person approves it as it will run."""
        if ctx.tool_call_approved or not isinstance(args, dict):
            return args
        decision = await self.gate.screen_call(call.tool_name, args, call.tool_call_id)
        self.decided[call.tool_call_id] = decision
        if isinstance(decision, CallAllowed) and decision.rewritten:
            call.args = dict(decision.arguments)
            call.id = None  # a provider's stored copy would replay the model's arguments
            return dict(decision.arguments)
        return args

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        decision = self._decided(call.tool_call_id, args) or await self.gate.screen_call(
            call.tool_name, dict(args), call.tool_call_id
        )
        if isinstance(decision, CallDenied):
            raise ToolFailed(decision.message)  # the model reads it; no retry is spent
        if ctx.tool_call_approved and decision.rewritten and decision.arguments != dict(args):
            raise ToolFailed(CHANGED_SINCE_APPROVAL)  # approved as it was, not as it would run
        _approve(ctx, decision)
        arguments = decision.arguments if decision.rewritten else args
        agent = self.gate.agents.get(call.tool_name)
        if agent is None:
            result = await handler(arguments)
        else:
            result = await self._hand_off(agent, dict(arguments), handler)
        content = _text(result)
        checked = await self.gate.check_result(decision, call.tool_name, content)
        if checked.is_error:
            raise ToolFailed(checked.content)
        return checked.content if checked.content != content else result

    def _decided(self, call_id: str, args: Any) -> CallAllowed | CallDenied | None:
        """The decision made when the call's arguments were validated, if it runs with
        the arguments it was screened with (as the hooks left them)."""
        decision = self.decided.pop(call_id, None)
        if isinstance(decision, CallAllowed) and decision.arguments != dict(args):
            return None
        return decision

    async def _hand_off(
        self, agent: str, arguments: dict[str, Any], handler: WrapToolExecuteHandler
    ) -> Any:
        """The tool's result, run between preAsk and postAsk: the answer as postAsk left
        it, or the refusal, which the model reads as the tool's failure."""
        results: list[Any] = []

        async def run(asked: dict[str, Any]) -> tuple[str, bool]:
            results.append(await handler(asked))
            return _text(results[-1]), False

        answer = await self.gate.hand_off(agent, arguments, run)
        if answer.is_error:
            raise ToolFailed(answer.content)
        return results[-1] if answer.content == _text(results[-1]) else answer.content


def _approve(ctx: RunContext[Any], decision: CallAllowed) -> None:
    """Nothing when the call may run: a hook asked no one, or a person approved it as it
    runs now. A hook's `ask` defers the call for approval (`ApprovalRequired`, its
    metadata the call as it will run: `{"hookgate": ..., "arguments": ...}`), or is
    denied where no one handles approvals (no `DeferredToolRequests` output, no
    deferred-call handler)."""
    if not decision.asks:
        return
    if not ctx.tool_call_approved:
        if not _approvals_handled(ctx):
            raise ToolFailed(unasked().message)
        raise ApprovalRequired({"hookgate": ASK_DESCRIPTION, "arguments": decision.arguments})
    shown = ctx.tool_call_metadata
    if (
        isinstance(shown, dict)
        and "arguments" in shown
        and shown["arguments"] != decision.arguments
    ):
        raise ToolFailed(CHANGED_SINCE_APPROVAL)


def _approvals_handled(ctx: RunContext[Any]) -> bool:
    """The run can ask someone: the agent's output may be `DeferredToolRequests`, or a
    capability handles deferred calls."""
    output = ctx.agent.output_type if ctx.agent is not None else None
    outputs = output if isinstance(output, (list, tuple)) else [output]
    if DeferredToolRequests in outputs:
        return True
    return any(_handles_deferred(leaf) for leaf in _leaves(ctx.root_capability))


def _leaves(capability: Any) -> list[Any]:
    inner = getattr(capability, "capabilities", None)
    if not isinstance(inner, (list, tuple)):
        return [] if capability is None else [capability]
    return [leaf for child in inner for leaf in _leaves(child)]


def _handles_deferred(capability: Any) -> bool:
    method = type(capability).handle_deferred_tool_calls
    return not isinstance(capability, HookgateCapability) and (
        method is not AbstractCapability.handle_deferred_tool_calls
    )


def _text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, default=str)


def _prompt_text(prompt: Any) -> str:
    if prompt is None or isinstance(prompt, str):
        return prompt or ""
    return "\n".join(part for part in prompt if isinstance(part, str))


def _answer(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, default=str)


def _rewrite_question(messages: list[Any], prompt: str) -> None:
    """Replace the text of the newest user prompt in `messages`."""
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        for index, part in enumerate(message.parts):
            if isinstance(part, UserPromptPart):
                parts = list(message.parts)
                parts[index] = dataclasses.replace(part, content=prompt)
                message.parts = parts
                return
