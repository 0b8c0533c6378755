"""hookgate's hooks around an OpenAI Agents SDK agent, as a wrapped agent:

    result = await hookgate_agent(agent, "hookgate.yaml").run("question")

`run` (or `run_sync`) takes `Runner.run`'s arguments. preGeneration screens the
question (a block answers with the hook's message; the model is never called),
pre- and postToolCall wrap every function tool's `on_invoke_tool` (the agent's, and
those of the agents it hands off to), postGeneration ends every run, errors and
cancellation included. A tool made by `Agent.as_tool()` (or one named in `agents`) also
runs preAsk, subagentStart, subagentStop and postAsk inside its tool-call hooks. A
hand-off to another agent (`handoffs=[agent]`) gives that agent the conversation, so
nothing can refuse it as a preAsk would: it is observed, subagentStart when it
happens, subagentStop when the run ends. MCP servers' tools are screened as the SDK
lists them at run time. Hosted tools run on OpenAI's side, and a `Handoff` object's
agent is built at run time: neither can be screened, and set-up says so (a warning, and
`unscreened`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import warnings
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    Model,
    ModelResponse,
    RunContextWrapper,
    Runner,
    RunResult,
    handoff,
)
from agents.items import ToolApprovalItem
from agents.run_state import RunState
from agents.testing import ScriptedModel, assistant_message
from agents.tool import maybe_invoke_function_tool_failure_error_function
from agents.tool_context import ToolContext

from hookgate.adapters.gate import (
    CallAllowed,
    CallDenied,
    Gate,
    HooksSource,
    PromptAllowed,
    PromptBlocked,
    unasked,
)
from hookgate.adapters.openai_agents_screen import (
    function_calls,
    prompt_text,
    rewritten_input,
    screened_run,
    screening,
)

Screened = CallAllowed | CallDenied

#: The agents the running turn handed the conversation to, in order (see `_observed`).
_HANDED_TO: ContextVar[list[str]] = ContextVar("hookgate_handed_to")


class UnscreenedTools(UserWarning):
    """Some of an agent's tools run where no hook can see them."""


def hookgate_agent(
    agent: Agent[Any],
    source: HooksSource,
    *,
    session_id: str | None = None,
    agents: Mapping[str, str] | None = None,
    approvals: bool = False,
) -> HookgateAgent:
    """`agent` with the hooks of `source` (a hooks file, a parsed config or an engine)
    around its runs and its function tools. Tools made by `Agent.as_tool()` are
    hand-offs to their agent; `agents` maps other tools that run an agent to its name.

    `approvals=True` says the program answers the SDK's approval interruptions
    (`result.interruptions`, `state.approve(item)`, then `run(state)`): a hook's `ask`
    interrupts the run (`as_run(item)`: the call as it will run). Without it, an `ask`
    denies the call (no one would answer)."""
    return HookgateAgent(
        agent, Gate(source, session_id=session_id, agents=agents), approvals=approvals
    )


class HookgateAgent:
    """An agent whose runs and function tools pass through hookgate's hooks."""

    def __init__(self, agent: Agent[Any], gate: Gate, *, approvals: bool = False) -> None:
        self.gate = gate
        self.approvals = approvals
        self.screened: dict[str, Screened] = {}
        """preToolCall's decisions made when the model asked for the calls (or, for a
        call no model answer showed, when the SDK asked whether it needs approval), by
        call id, until the call runs."""
        self.tool_names: set[str] = set()
        """The function tools screened: the model's calls to them are screened as the
        model makes them."""
        self.unscreened: list[str] = []
        """What no hook sees: hosted tools, `Handoff` objects, and the
        tools of an agent run by `Agent.as_tool()`, by name."""
        self.agent = self._guarded(agent, {})
        if self.unscreened:
            warnings.warn(
                "hookgate cannot screen these tools (they run outside the agent's function "
                f"tools): {', '.join(self.unscreened)}",
                UnscreenedTools,
                stacklevel=3,
            )

    async def run(self, input: str | list[Any] | RunState[Any], **options: Any) -> RunResult:
        """`Runner.run(agent, input, **options)` with the hooks around it. A `RunState`
        (a run an approval interrupted, answered) goes on without a second preGeneration."""
        if isinstance(input, RunState):
            return await self._resume(input, options)

        async def allowed(decision: PromptAllowed) -> RunResult:
            question = rewritten_input(input, decision)
            handed_to: list[str] = []
            token = _HANDED_TO.set(handed_to)
            answer, error = "", "the run ended before the agent answered"
            try:
                async with screened_run(options, self._screen, decision) as screened:
                    result = await Runner.run(self.agent, question, **screened)
                answer, error = str(result.final_output), ""
                return result
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                raise
            finally:
                _HANDED_TO.reset(token)
                # Also after an error or a cancellation, like postGeneration. Only the
                # last agent handed to answered; those before it handed on.
                for index, agent in enumerate(handed_to):
                    last = index == len(handed_to) - 1
                    await self.gate.agent_stopped(
                        agent, answer if last else "", (error or None) if last else None
                    )

        async def blocked(decision: PromptBlocked) -> RunResult:
            return await self._answer_blocked(decision, options)

        return await self.gate.run_turn(
            prompt_text(input), allowed, blocked, lambda result: str(result.final_output)
        )

    async def _resume(self, state: RunState[Any], options: dict[str, Any]) -> RunResult:
        """The rest of an interrupted run, ended by postGeneration like any run."""
        original = state._original_input
        resumed = PromptAllowed(prompt_text(original if isinstance(original, (str, list)) else ""))

        async def go_on(decision: PromptAllowed) -> RunResult:
            async with screened_run(options, self._screen) as screened:
                return await Runner.run(self.agent, state, **screened)

        return await self.gate.end_turn(resumed, go_on, lambda result: str(result.final_output))

    async def _screen(self, response: ModelResponse) -> ModelResponse:
        """preToolCall on the model's calls to screened tools, before the SDK reads the
        answer: a call a hook rewrote is, from then on, the call the model made (the
        approval item, the call run, the history)."""
        output = list(response.output)
        for index, item, arguments in function_calls(response):
            if item.name in self.tool_names:
                decision = await self.gate.screen_call(item.name, arguments, item.call_id)
                self.screened[item.call_id] = decision
                if isinstance(decision, CallAllowed) and decision.rewritten:
                    update = {"arguments": json.dumps(decision.arguments)}
                    output[index] = item.model_copy(update=update)
        return dataclasses.replace(response, output=output)

    def as_run(self, item: ToolApprovalItem) -> dict[str, Any] | None:
        """The arguments a call awaiting approval will run with, as the hooks left them
        (the item's own `arguments` show the same: the model's answer was rewritten
        before the SDK read it), or None for a call no hook screened."""
        decision = self.screened.get(str(getattr(item.raw_item, "call_id", "")))
        return dict(decision.arguments) if isinstance(decision, CallAllowed) else None

    def run_sync(self, input: str | list[Any] | RunState[Any], **options: Any) -> RunResult:
        """`run`, for a caller without an event loop, on the loop `Runner.run_sync` uses
        (clients made on it stay usable from one run to the next). Interrupted (Ctrl-C),
        the run is cancelled and its postGeneration hooks finish first."""
        loop = _default_loop()
        task = loop.create_task(self.run(input, **options))
        try:
            return loop.run_until_complete(task)
        except BaseException:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    loop.run_until_complete(task)
            raise

    async def _answer_blocked(self, blocked: PromptBlocked, options: dict[str, Any]) -> RunResult:
        """A run whose only answer is the hook's: the model is never called, and the
        history (a session's too) keeps the marker, not the question."""
        answering = self.agent.clone(
            model=ScriptedModel([[assistant_message(blocked.response)]]),
            tools=[],
            handoffs=[],
            mcp_servers=[],
            input_guardrails=[],
            output_guardrails=[],
        )
        kept = {key: options[key] for key in ("context", "session") if key in options}
        return await Runner.run(answering, blocked.marker, **kept)

    def _guarded(self, agent: Agent[Any], done: dict[int, Agent[Any]]) -> Agent[Any]:
        """A clone of `agent` (and of each agent it hands off to) with every function
        tool screened."""
        if id(agent) in done:
            return done[id(agent)]
        clone = agent.clone()
        done[id(agent)] = clone
        if isinstance(agent.model, Model):
            clone.model = screening(agent.model, self._screen)
        clone.tools = [self._screened(tool, agent.name) for tool in agent.tools]
        clone.handoffs = [
            handoff(self._guarded(target, done), on_handoff=self._observed(target.name))
            if isinstance(target, Agent)
            else self._unscreened(target, agent.name)
            for target in agent.handoffs
        ]
        if agent.mcp_servers:
            clone.get_mcp_tools = self._screened_mcp(clone, agent.name)  # type: ignore[method-assign,assignment]
        return clone

    def _screened_mcp(
        self, clone: Agent[Any], owner: str
    ) -> Callable[[RunContextWrapper[Any]], Awaitable[list[Any]]]:
        """The agent's MCP servers' tools, listed by the SDK at run time, each screened
        like a function tool (the SDK makes each a `FunctionTool` calling its server)."""
        listed = Agent.get_mcp_tools

        async def get_mcp_tools(context: RunContextWrapper[Any]) -> list[Any]:
            return [self._screened(tool, owner) for tool in await listed(clone, context)]

        return get_mcp_tools

    def _observed(self, agent: str) -> Callable[[Any], Awaitable[None]]:
        """What a hand-off to `agent` does first: subagentStart (observed: the hooks
        cannot refuse it), and `agent` noted for subagentStop at the end of the run."""

        async def started(context: Any) -> None:
            await self.gate.agent_started(agent)
            handed_to = _HANDED_TO.get(None)
            if handed_to is not None:
                handed_to.append(agent)

        return started

    def _decided(self, call_id: str, arguments: dict[str, Any]) -> Screened | None:
        """The decision made on the call when the model asked for it, if it is the call
        as it was screened (a rewrite: as the hooks left it)."""
        decision = self.screened.get(call_id)
        if isinstance(decision, CallAllowed) and decision.arguments != arguments:
            return None
        return decision

    def _unscreened(self, item: Any, owner: str) -> Any:
        self.unscreened.append(
            f"{owner}: {type(item).__name__} {getattr(item, 'name', '')}".rstrip()
        )
        return item

    def _screened(self, tool: Any, owner: str) -> Any:
        if not isinstance(tool, FunctionTool):
            return self._unscreened(tool, owner)
        self.tool_names.add(tool.name)
        invoke, gate = tool.on_invoke_tool, self.gate
        asked = gate.agents.get(tool.name) or _asked_agent(tool)
        inner = getattr(tool, "_agent_instance", None)
        if isinstance(inner, Agent) and (inner.tools or inner.handoffs or inner.mcp_servers):
            # The SDK runs the agent it keeps on the tool, not a clone we could screen.
            self.unscreened.append(f"{owner}: {tool.name}: tools of {inner.name}")

        theirs = tool.needs_approval

        async def needs_approval(
            context: RunContextWrapper[Any], arguments: dict[str, Any], call_id: str
        ) -> bool:
            """preToolCall, before the SDK asks anyone: its `ask` asks (with approvals)."""
            decision = self._decided(call_id, arguments) or await gate.screen_call(
                tool.name, arguments, call_id
            )
            self.screened[call_id] = decision
            if isinstance(decision, CallDenied):
                return False  # denied when it runs, with no one asked
            if decision.asks and self.approvals:
                return True
            return await _their_approval(theirs, context, arguments, call_id)

        async def on_invoke_tool(context: ToolContext[Any], arguments: str) -> Any:
            decision = self.screened.pop(context.tool_call_id, None) or await gate.screen_call(
                tool.name, json.loads(arguments or "{}"), context.tool_call_id
            )
            if isinstance(decision, CallAllowed) and decision.asks and not self.approvals:
                decision = unasked()
            if isinstance(decision, CallDenied):
                return decision.message  # a tool's text answer: the model reads it
            if decision.rewritten:
                arguments = json.dumps(decision.arguments)
            error = None
            if asked is None:
                result, error = await _invoked(invoke, tool, context, arguments)
            else:
                result = await _hand_off(gate, asked, context, decision.arguments, invoke)
            content = str(result) if error is None else error
            checked = await gate.check_result(decision, tool.name, content, error is not None)
            return checked.content if checked.content != content else result

        return dataclasses.replace(
            tool, on_invoke_tool=on_invoke_tool, needs_approval=needs_approval
        )


async def _invoked(
    invoke: Callable[[ToolContext[Any], str], Awaitable[Any]],
    tool: FunctionTool,
    context: ToolContext[Any],
    arguments: str,
) -> tuple[Any, str | None]:
    """The tool's result, and its error if it failed. The SDK turns a tool's exception
    into the text the model reads (its `failure_error_function`) inside
    `on_invoke_tool`; the tool is run here beneath that handling, so postToolCall reads
    the failure as one, with the exception (the model, the SDK's text, unless a hook
    replaces it)."""
    run = getattr(invoke, "_invoke_tool_impl", None)
    if run is None:
        return await invoke(context, arguments), None
    try:
        return await run(context, arguments), None
    except Exception as exc:
        bound = getattr(invoke, "_function_tool", None) or tool
        answer = await maybe_invoke_function_tool_failure_error_function(
            function_tool=bound, context=context, error=exc
        )
        if answer is None:
            raise
        invoke._on_handled_error(bound, exc, arguments, context)  # type: ignore[attr-defined]
        return answer, f"{type(exc).__name__}: {exc}"


async def _their_approval(
    theirs: Any, context: RunContextWrapper[Any], arguments: dict[str, Any], call_id: str
) -> bool:
    """The tool's own `needs_approval`: a flag, or a policy (sync or async)."""
    if not callable(theirs):
        return bool(theirs)
    answer = theirs(context, arguments, call_id)
    return bool(await answer if inspect.isawaitable(answer) else answer)


def _asked_agent(tool: FunctionTool) -> str | None:
    """The name of the agent a tool made by `Agent.as_tool()` runs (the SDK marks such
    a tool and keeps its agent on it), else None."""
    agent = getattr(tool, "_agent_instance", None)
    if not getattr(tool, "_is_agent_tool", False) or not isinstance(agent, Agent):
        return None
    return agent.name


async def _hand_off(
    gate: Gate,
    agent: str,
    context: ToolContext[Any],
    arguments: dict[str, Any],
    invoke: Callable[[ToolContext[Any], str], Awaitable[Any]],
) -> Any:
    """The agent tool's result between preAsk and postAsk: the answer as postAsk left it,
    or the refusal, as the tool's text answer the model reads."""
    results: list[Any] = []

    async def run(question: dict[str, Any]) -> tuple[str, bool]:
        results.append(await invoke(context, json.dumps(question)))
        return str(results[-1]), False

    answer = await gate.hand_off(agent, arguments, run)
    if results and answer.content == str(results[-1]):
        return results[-1]
    return answer.content


def _default_loop() -> asyncio.AbstractEventLoop:
    """The thread's default event loop, made if there is none or it was closed."""
    policy = asyncio.get_event_loop_policy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = policy.get_event_loop()
        except RuntimeError:
            loop = None
    if loop is None or loop.is_closed():
        loop = policy.new_event_loop()
        policy.set_event_loop(loop)
    return loop
