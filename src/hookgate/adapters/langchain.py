"""hookgate's hooks around a LangChain v1 agent, as one middleware:

    create_agent(model, tools, middleware=[hookgate_middleware("hookgate.yaml")])

preGeneration in `before_agent` (a block ends the run with the hook's answer), pre- and
postToolCall around every tool call (sync and async; postToolCall inside the tool's own
run, so that no callback or stream event carries a result the hooks replaced; a
hand-off tool's postAsk too: `langchain_handoff`), postGeneration in `after_agent`, on
an error or a cancellation that ends the run from the model or a tool, and when the
graph run fails or is abandoned anywhere else (a stream the caller stopped reading:
`langchain_ends`).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, NotRequired, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    hook_config,
)
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolInvocationError
from langgraph.runtime import Runtime

from hookgate.adapters.gate import (
    CallAllowed,
    CallDenied,
    Gate,
    HooksSource,
    PromptAllowed,
    PromptBlocked,
    TurnEnd,
)
from hookgate.adapters.langchain_approval import (
    Screened,
    approved,
    as_run,
    as_screened,
    call_of,
    calls_of,
)
from hookgate.adapters.langchain_checked import (
    Checks,
    ToolAnswer,
    as_checked,
    checking,
    denied,
    result_of,
    rewritten,
    text_of,
)
from hookgate.adapters.langchain_ends import RUN_ENDS
from hookgate.adapters.langchain_handoff import hand_off, hand_off_sync
from hookgate.hooks.wording import UNCHECKED_MARKER

#: Raised through the wrappers without ending the run: LangChain answers the model with a
#: tool's bad arguments, and an interrupt (human in the loop) pauses the run.
_NOT_AN_END = (ToolInvocationError, GraphBubbleUp)


class HookgateState(AgentState[Any]):
    """What the middleware remembers during one run, never shown to the model."""

    hookgate_prompt: NotRequired[Annotated[str, PrivateStateAttr]]
    hookgate_context: NotRequired[Annotated[list[str], PrivateStateAttr]]
    hookgate_blocked: NotRequired[Annotated[bool, PrivateStateAttr]]
    hookgate_run: NotRequired[Annotated[str, PrivateStateAttr]]
    """This run's id, which postGeneration is recorded once for."""


def hookgate_middleware(
    source: HooksSource, *, session_id: str | None = None, agents: Mapping[str, str] | None = None
) -> HookgateMiddleware:
    """The middleware running the hooks of `source` (a hooks file, a parsed config or
    an engine) around every run of the agent it is given to.

    `agents` maps each tool that runs another agent to that agent's name
    (`{"research": "researcher"}`): its calls also run preAsk, subagentStart,
    subagentStop and postAsk, inside pre- and postToolCall."""
    return HookgateMiddleware(Gate(source, session_id=session_id, agents=agents))


class HookgateMiddleware(AgentMiddleware[HookgateState, Any, Any]):
    """The hooks of one agent file at LangChain's interception points."""

    state_schema = HookgateState

    def __init__(self, gate: Gate) -> None:
        super().__init__()
        self.gate = gate
        self.screened: dict[str, Screened] = {}
        """preToolCall's decisions made when the model asked for the calls, by call id,
        with the arguments as they will run, until each call runs: an approval
        (LangChain's own middleware, or a hook's `ask`) is about the call as it will
        run. A call that reaches its tool with other arguments (a reviewer edited it)
        is screened again."""
        self.ended: set[str] = set()
        """The runs postGeneration was recorded for."""
        self.lock = threading.Lock()

    @property
    def name(self) -> str:
        return "hookgate"

    # preGeneration
    @hook_config(can_jump_to=["end"])
    def before_agent(self, state: HookgateState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        question = _question(state)
        if question is None:
            return self._begun(_fresh(""))
        return self._begun(_screened(question, self.gate.screen_prompt_sync(text_of(question))))

    @hook_config(can_jump_to=["end"])
    async def abefore_agent(
        self, state: HookgateState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        question = _question(state)
        if question is None:
            return self._begun(_fresh(""))
        try:
            decision = await self.gate.screen_prompt(text_of(question))
        except asyncio.CancelledError:
            await self.gate.finish(UNCHECKED_MARKER, None, "cancelled")
            raise
        return self._begun(_screened(question, decision))

    # postGeneration: once per run, however it ends
    def after_agent(self, state: HookgateState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        if self._ends(state):
            self.gate.finish_sync(*_ending(state))
        return None

    async def aafter_agent(
        self, state: HookgateState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        if self._ends(state):
            await self.gate.finish(*_ending(state))
        return None

    def _ends(self, state: Any) -> bool:
        """True the first time the run of `state` ends: parallel tools that raise, or a
        tool's error after the run's answer, end it once."""
        run = state.get("hookgate_run", "") if isinstance(state, dict) else ""
        with self.lock:
            if run in self.ended:
                return False
            if run:
                self.ended.add(run)
        return True

    def _begun(self, update: dict[str, Any]) -> dict[str, Any]:
        """`update` (a new run's state), with the run watched (`_watch`)."""
        self._watch(update)
        return update

    def _watch(self, state: Any) -> None:
        """End the run of `state` if its graph run fails or is abandoned where no
        middleware hook runs: a stream the caller stopped reading, say (RUN_ENDS)."""
        run, prompt = state.get("hookgate_run"), _prompt_of(state)
        if run and not state.get("hookgate_blocked"):

            async def end(outcome: TurnEnd) -> None:
                if self._ends({"hookgate_run": run}):
                    await self.gate.finish(prompt, None, outcome)

            RUN_ENDS.watch(run, end)

    def _failed_sync(self, state: Any) -> None:
        if self._ends(state):
            self.gate.finish_sync(_prompt_of(state), None, "error")

    async def _failed(self, state: Any, exc: BaseException) -> None:
        if self._ends(state):
            await self.gate.finish(_prompt_of(state), None, _failed(exc))

    # The model call: the context hooks added, the calls it asks for screened, and
    # postGeneration when it fails (a hook's cancellation included).
    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        self._watch(request.state)
        try:
            response = handler(_with_context(request))
            for call in calls_of(request, response):
                self.screened[call["id"]] = as_run(call, self.gate.screen_call_sync(*call_of(call)))
        except _NOT_AN_END:
            raise
        except Exception:
            self._failed_sync(request.state)
            raise
        return as_screened(response, self.screened)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        self._watch(request.state)
        try:
            response = await handler(_with_context(request))
            for call in calls_of(request, response):
                decision = await self.gate.screen_call(*call_of(call))
                self.screened[call["id"]] = as_run(call, decision)
        except _NOT_AN_END:
            raise
        except (Exception, asyncio.CancelledError) as exc:
            await self._failed(request.state, exc)
            raise
        return as_screened(response, self.screened)

    # pre- and postToolCall
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolAnswer]
    ) -> ToolAnswer:
        self._watch(request.state)  # a run resumed after an interrupt is a new graph run
        try:
            return self._tool_call(request, handler)
        except _NOT_AN_END:
            raise
        except Exception:
            self._failed_sync(request.state)
            raise

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolAnswer]],
    ) -> ToolAnswer:
        self._watch(request.state)
        try:
            return await self._atool_call(request, handler)
        except _NOT_AN_END:
            raise
        except (Exception, asyncio.CancelledError) as exc:
            await self._failed(request.state, exc)
            raise

    def _tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolAnswer]
    ) -> ToolAnswer:
        name, call_id = request.tool_call["name"], request.tool_call["id"]
        decision = self._screened(request.tool_call) or self.gate.screen_call_sync(
            *call_of(request.tool_call)
        )
        decision = approved(request, decision)  # may pause the run (an interrupt)
        self.screened.pop(call_id or "", None)
        if isinstance(decision, CallDenied):
            return denied(decision, name, call_id)
        checks = Checks(self.gate, decision, name)
        request, agent = rewritten(request, decision), self.gate.agents.get(name)
        if agent is None:
            answer = handler(checking(request, checks.check, checks.acheck))
        else:
            answer = hand_off_sync(agent, request, checks, handler)
        if not isinstance(answer, ToolMessage):
            return answer
        return as_checked(answer, checks.last or checks.check(*result_of(answer)))

    async def _atool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolAnswer]],
    ) -> ToolAnswer:
        name, call_id = request.tool_call["name"], request.tool_call["id"]
        decision = self._screened(request.tool_call) or await self.gate.screen_call(
            *call_of(request.tool_call)
        )
        decision = approved(request, decision)  # may pause the run (an interrupt)
        self.screened.pop(call_id or "", None)
        if isinstance(decision, CallDenied):
            return denied(decision, name, call_id)
        checks = Checks(self.gate, decision, name)
        request, agent = rewritten(request, decision), self.gate.agents.get(name)
        if agent is None:
            answer = await handler(checking(request, checks.check, checks.acheck))
        else:
            answer = await hand_off(agent, request, checks, handler)
        if not isinstance(answer, ToolMessage):
            return answer
        return as_checked(answer, checks.last or await checks.acheck(*result_of(answer)))

    def _screened(self, call: Mapping[str, Any]) -> CallAllowed | CallDenied | None:
        """The decision made when the model asked for `call`, if it runs as screened."""
        args, decision = self.screened.get(call.get("id") or "", ({}, None))
        return decision if args == call["args"] else None


def _question(state: HookgateState) -> HumanMessage | None:
    """The question of this run: the last human message."""
    for message in reversed(state["messages"]):
        if isinstance(message, HumanMessage):
            return message
    return None


def _fresh(prompt: str, context: tuple[str, ...] = (), *, blocked: bool = False) -> dict[str, Any]:
    """The middleware's state for a new run (a thread's state outlives its runs)."""
    return {
        "hookgate_run": uuid.uuid4().hex,
        "hookgate_prompt": prompt,
        "hookgate_context": list(context),
        "hookgate_blocked": blocked,
    }


def _screened(question: HumanMessage, decision: PromptAllowed | PromptBlocked) -> dict[str, Any]:
    """The state update for the question as the hooks decided: blocked, the question
    becomes a marker and the hook's answer ends the run; rewritten, the rewrite is the
    question (same message id: it replaces it)."""
    if isinstance(decision, PromptBlocked):
        marker = HumanMessage(content=decision.marker, id=question.id)
        return {
            **_fresh(decision.marker, blocked=True),
            "messages": [marker, AIMessage(content=decision.response)],
            "jump_to": "end",
        }
    update = _fresh(decision.prompt, decision.context)
    if decision.rewritten:
        update["messages"] = [HumanMessage(content=decision.prompt, id=question.id)]
    return update


def _ending(state: HookgateState) -> tuple[str, str | None, TurnEnd]:
    answer = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
    text = None if answer is None else text_of(answer)
    return _prompt_of(state), text, "blocked" if state.get("hookgate_blocked") else "answered"


def _prompt_of(state: Any) -> str:
    return str(state.get("hookgate_prompt", "")) if isinstance(state, dict) else ""


def _failed(exc: BaseException) -> TurnEnd:
    return "cancelled" if isinstance(exc, asyncio.CancelledError) else "error"


def _with_context(request: ModelRequest[Any]) -> ModelRequest[Any]:
    """The request with the context preGeneration hooks added, for this run only."""
    context = cast("list[str]", request.state.get("hookgate_context") or [])
    if not context:
        return request
    notes = "\n\n".join(context)
    system = request.system_message
    text = notes if system is None else f"{text_of(system)}\n\n{notes}"
    return request.override(system_message=SystemMessage(content=text))
