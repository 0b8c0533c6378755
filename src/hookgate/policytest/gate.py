"""The session's real gate with every tool replaced by a stand-in that records what reached it.

`PolicyGate.open` assembles a `ToolGate` from an agent file as a session does (its
hooks, guardrails included, and its permissions), but each tool is a `StandIn` with
the real tool's spec and consent need that records its arguments and returns the
given result, and consent is a `RecordingConsent` that notes the question and says
no. So a call's `Verdict` is the real gate's answer, and nothing runs but the hooks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hookgate.config.agentfile import AgentConfig, load_agent_file
from hookgate.hooks import HookEngine, Outcome
from hookgate.hooks.files.digest import sha256
from hookgate.hooks.records import NamedTuple
from hookgate.messages import ToolCall, ToolSpec
from hookgate.runtime.agent import permission_mode
from hookgate.runtime.approvals import Approvals
from hookgate.runtime.caps import CallCaps
from hookgate.runtime.consent import AlwaysAllow, ConsentRequest
from hookgate.runtime.toolcall import ScreenedCall, ToolGate, run_guarded, screen_call
from hookgate.security.policy import Policy
from hookgate.tools import ToolContext, ToolRegistry, ToolResult, builtin_tools
from hookgate.view import MarkKind, NoticeKind, ToolMark

#: What a stand-in returns where the case gives no result (a preToolCall case): the
#: postToolCall hooks still run on it, as they would on any result.
PLACEHOLDER = ToolResult("[hookgate: a stand-in ran in place of the tool]")
#: How the gate appends the hooks' context to a result (`toolcall.run_guarded`).
HOOK_NOTES = "\n\n[hook notes]\n"


class Verdict(NamedTuple):
    """The whole gate's answer to one call or question, and who gave it."""

    decision: str
    by: str | None = None
    """The hook, `permission rule`, `permissions` or `user` that decided; None: nothing did."""
    reason: str | None = None
    input: Mapping[str, Any] | None = None
    """The arguments the tool ran with; None where it did not run."""
    result: str | None = None
    """The result the model reads, for a call given one."""
    prompt: str | None = None
    """The question the model reads, for a preGeneration case."""
    context: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    """The hooks' lines for the user and their failures: why a case went as it did."""
    rewritten: bool = False
    replaced: bool = False


class Bench:
    """What the stand-ins return for the call at hand, and what reached them."""

    def __init__(self) -> None:
        self.result = PLACEHOLDER
        self.received: list[dict[str, Any]] = []


class StandIn:
    """A tool's spec and consent need, without the tool: records, then returns `bench.result`."""

    def __init__(self, spec: ToolSpec, needs_consent: bool, bench: Bench) -> None:
        self.spec = spec
        self.needs_consent = needs_consent
        self._bench = bench

    async def run(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        self._bench.received.append(dict(arguments))
        return self._bench.result


class RecordingConsent:
    """Consent that notes each question and answers no: `ask` is the gate's answer then."""

    def __init__(self) -> None:
        self.asked: list[ConsentRequest] = []

    async def ask(self, request: ConsentRequest) -> bool:
        self.asked.append(request)
        return False


class RecordingView:
    """A turn view that keeps the call's marks, notices and the result before hook notes."""

    def __init__(self) -> None:
        self.notices: list[str] = []
        self.marks: list[ToolMark] = []
        self.finished: ToolResult | None = None

    def answer_text(self, delta: str) -> None:
        pass

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        self.notices.append(text)

    def tool_started(self, call: ToolCall) -> None:
        pass

    def tool_marked(self, call: ToolCall, mark: ToolMark) -> None:
        self.marks.append(mark)

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        self.finished = result

    def mark(self, kind: MarkKind) -> ToolMark | None:
        return next((mark for mark in self.marks if mark.kind is kind), None)


class PolicyGate:
    """One agent file's gate on stand-ins: `await tool_call(...)`, `await prompt(...)`.

    One engine serves every call, as in a session: a persistent hook starts once. The
    hooks run in the agent file's folder, as `hooks fire` runs them; the tools' and the
    rules' project is `project_dir`. `environ` is the hooks' environment (replay adds
    `HOOKGATE_REPLAY=1`).
    """

    def __init__(self, config: AgentConfig, project_dir: Path, environ: Mapping[str, str]) -> None:
        self.config = config
        self.project_dir = project_dir
        self.bench = Bench()
        self.consent = RecordingConsent()
        self.engine = HookEngine(
            config.hooks, session_id=f"policytest-{os.urandom(6).hex()}",
            project_dir=str(config.path.parent), environ=environ,
            permission_mode=permission_mode(config, self.consent),
        )  # fmt: skip
        tools = ToolRegistry(
            StandIn(tool.spec, tool.needs_consent, self.bench)
            for tool in builtin_tools(config.tools)
        )
        self.gate = ToolGate(
            engine=self.engine,
            tools=tools,
            policy=Policy(config.permissions.allow, config.permissions.deny, project_dir),
            consent=AlwaysAllow() if config.yolo else self.consent,
            context=ToolContext(
                project_dir=project_dir,
                env={},
                workspace_dirs=config.workspace_dirs,
                sandbox=config.sandbox,
            ),
            caps=CallCaps(config.max_tool_calls, config.max_argument_bytes),
            asker=self.consent,
            approvals=Approvals(),
        )

    @classmethod
    def open(
        cls,
        agent_file: Path,
        *,
        project_dir: Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> PolicyGate:
        """The gate of `agent_file`; its tools work in `project_dir` (default: the file's folder)."""
        config = load_agent_file(agent_file)
        where = project_dir if project_dir is not None else config.path.parent
        return cls(config, where.resolve(), os.environ if environ is None else environ)

    def offers(self, tool: str) -> bool:
        return tool in self.gate.tools

    def add_tool(self, name: str) -> None:
        """A stand-in for a tool a session builds beside the agent file's (`ask_agent`,
        the team's) with that tool's consent need; for any other (MCP, another agent's),
        one that needs consent, as an MCP tool does."""
        if name not in self.gate.tools:
            needs = session_tool_consent().get(name, True)
            self.gate.tools.add(StandIn(ToolSpec(name, "a recorded tool"), needs, self.bench))

    async def tool_call(
        self, tool: str, arguments: Mapping[str, Any], result: ToolResult | None = None
    ) -> Verdict:
        """The gate's answer to the model calling `tool`; with `result`, what the tool
        returned, for the postToolCall hooks (without it they read `PLACEHOLDER`)."""
        self.bench.result = result if result is not None else PLACEHOLDER
        self.bench.received.clear()
        self.consent.asked.clear()
        view = RecordingView()
        call = ToolCall(_call_id(tool, arguments), tool, dict(arguments))
        screened = await screen_call(self.gate, call, view)
        outcome = await run_guarded(self.gate, screened, view)
        return self._call_verdict(screened, view, outcome.result, outcome.stop_reason, result)

    def _call_verdict(
        self,
        screened: ScreenedCall,
        view: RecordingView,
        final: ToolResult,
        stop_reason: str | None,
        given: ToolResult | None,
    ) -> Verdict:
        pre = screened.pre
        ran = self.bench.received[0] if self.bench.received else None
        if ran is None and self.consent.asked:  # what it would have run with, had you said yes
            ran = dict(self.consent.asked[0].arguments)
        shown = view.finished or final
        context = tuple(final.content[len(shown.content) + len(HOOK_NOTES) :].splitlines())
        rewritten = ran is not None and ran != dict(screened.asked.arguments)
        replaced = given is not None and bool(self.bench.received) and shown[:2] != given[:2]
        common: dict[str, Any] = {
            "input": ran, "context": context, "notices": tuple(view.notices),
            "rewritten": rewritten, "replaced": replaced,
            "result": shown.content if given is not None else None,
        }  # fmt: skip
        denied = view.mark(MarkKind.DENIED)
        if stop_reason is not None:
            return Verdict("stop", pre.blocked_by, stop_reason, **common)
        if self.consent.asked:
            if pre.permission == "ask":
                return Verdict("ask", "a preToolCall hook", "a hook asked for consent", **common)
            return Verdict("ask", "permissions", _why_asked(screened.asked.name), **common)
        if denied is not None:
            return Verdict("deny", denied.by, denied.reason or shown.content, **common)
        if rewritten:
            mark = view.mark(MarkKind.REWRITTEN)
            return Verdict("rewrite", mark.by if mark else None, None, **common)
        if replaced:
            mark = view.mark(MarkKind.REPLACED)
            by = mark.by if mark else _withheld_by(shown)
            return Verdict("replace", by, None, **common)
        return Verdict("allow", *self._allowed_by(screened), **common)

    def _allowed_by(self, screened: ScreenedCall) -> tuple[str | None, str | None]:
        """The allow rule that let a call run without asking, if one did (said, not decided:
        the gate decided already)."""
        if screened.pre.permission is not None:
            return None, None
        call = screened.asked
        tool = self.gate.tools.get(call.name)
        needs = tool is not None and tool.needs_consent
        decision = self.gate.policy.judge(call.name, call.arguments, needs_consent=needs)
        return ("permission rule", decision.rule) if decision.rule is not None else (None, None)

    async def prompt(self, text: str) -> Verdict:
        """The preGeneration hooks' answer to the question `text`, read as `runtime/turn.py` reads it."""
        pre = await self.engine.run("preGeneration", {"prompt": text})
        notices = _notices(pre)
        if pre.halted:
            by = pre.blocked_by or next((failure.hook for failure in pre.errors), None)
            reason = pre.halt_reason
            return Verdict("block", by, reason, context=pre.context, notices=notices)
        prompt = str(pre.payload["prompt"])
        if "prompt" in pre.changed:
            by = pre.changed_by.get("prompt")
            return Verdict("rewrite", by, None, prompt=prompt, context=pre.context,
                           notices=notices, rewritten=True)  # fmt: skip
        decision = "context" if pre.context else "allow"
        return Verdict(decision, None, None, prompt=prompt, context=pre.context, notices=notices)

    async def event(self, name: str, payload: Mapping[str, Any]) -> Verdict:
        """Any other event's hooks on `payload`: blocked or not, and their context."""
        outcome = await self.engine.run(name, payload)
        if outcome.halted:
            reason = outcome.halt_reason
            return Verdict("block", outcome.blocked_by, reason, notices=_notices(outcome))
        return Verdict("allow", context=outcome.context, notices=_notices(outcome))

    async def aclose(self) -> None:
        await self.engine.aclose()


def session_tool_consent() -> dict[str, bool]:
    """The consent need of the tools a session adds for `agents:` and `team:`, read from
    their classes (they are built from a live session, not from the file)."""
    from hookgate.handoff.ask_tool import AskAgentTool
    from hookgate.team.tools import CreateTaskTool, ListTasksTool, WaitForTasksTool

    return {
        "ask_agent": AskAgentTool.needs_consent,
        "create_task": CreateTaskTool.needs_consent,
        "list_tasks": ListTasksTool.needs_consent,
        "wait_for_tasks": WaitForTasksTool.needs_consent,
    }


def _call_id(tool: str, arguments: Mapping[str, Any]) -> str:
    """The same id for the same call on every run, as `hooks fire` makes one."""
    text = json.dumps([tool, arguments], sort_keys=True, default=str)
    return "test_" + sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:24]


def _why_asked(tool: str) -> str:
    return f"no permissions.allow rule covers this {tool} call and it needs consent"


def _withheld_by(result: ToolResult) -> str | None:
    """The hook a withheld result names (`WITHHELD_RESULT` quotes it), if any."""
    text = result.content
    start = text.find("hook '")
    return text[start + 6 : text.find("'", start + 6)] if start >= 0 else None


def _notices(outcome: Outcome) -> tuple[str, ...]:
    failures = tuple(str(failure) for failure in outcome.errors)
    return (*outcome.notices, *(f for f in failures if f not in outcome.notices))
