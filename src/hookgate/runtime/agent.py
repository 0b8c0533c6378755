"""One agent session, assembled: config, hooks, model, guarded tools, history.

`open_agent` reads the agent file once (the hooks are a snapshot from then on), opens
or resumes the session file, and runs the `sessionStart` hooks; a block there aborts
the run, after the `postGeneration` hooks have heard so (outcome `aborted`). Front ends hold an `AgentSession` and call `turn.run_turn` with it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from hookgate.config.agentfile import AgentConfig
from hookgate.errors import SessionError
from hookgate.hooks import ConfigError, HookEngine, HookgateError, Outcome
from hookgate.hooks.author.lint import lint_config
from hookgate.hooks.process import programs_path
from hookgate.hooks.runs.environments import found_by_name
from hookgate.messages import Message, ToolSpec
from hookgate.models import ModelClient, make_model
from hookgate.runtime import envfile
from hookgate.runtime.approvals import Approvals
from hookgate.runtime.caps import CallCaps
from hookgate.runtime.consent import AlwaysAllow, AlwaysDeny, Consent
from hookgate.runtime.history import KEEP_RECENT, History
from hookgate.runtime.resume import read_for_resume
from hookgate.runtime.toolcall import ToolGate
from hookgate.security.policy import Policy
from hookgate.security.rulecheck import rule_warnings
from hookgate.security.trust.check import TrustedAgent, asked_digests, load_trusted
from hookgate.security.trust.store import TrustStore
from hookgate.store.home import cache_dir
from hookgate.store.session import Session, SessionStore, new_session_id
from hookgate.store.transcript import TRANSCRIPT_ENV, Transcript, transcript_path
from hookgate.telemetry import observer_for
from hookgate.tools import Tool, ToolContext, ToolRegistry, builtin_tools
from hookgate.tools.sandbox import Boundaries, SandboxSettings
from hookgate.tools.sandbox.boundaries import private_directory
from hookgate.tools.sandbox.settings import floor_env, inherited
from hookgate.tools.settings import ShellLimits, shell_environment

if TYPE_CHECKING:  # imported where a file names agents or a team (open_agent)
    from hookgate.handoff import AskDisplay, Handoffs
    from hookgate.team import TeamDisplay

#: An MCP server's limits in the sandbox: none beyond the user's own (it is no shell).
UNLIMITED = ShellLimits(processes=None)
#: What postGeneration hooks read as the prompt of a run a sessionStart hook aborted:
#: no preGeneration hook has checked the question, so it is not passed on.
ABORTED_MARKER = "[prompt not checked: a sessionStart hook aborted the run]"


class SessionStopped(HookgateError):
    """A sessionStart hook blocked the run."""


class AgentSession:
    # `__weakref__`: whoever runs many sessions can tell that each one is let go.
    __slots__ = (
        "__weakref__", "config", "engine", "gate", "handoffs", "history", "model",
        "project_dir", "resources", "start_context",
    )  # fmt: skip

    config: AgentConfig
    engine: HookEngine
    model: ModelClient
    gate: ToolGate
    history: History
    project_dir: Path
    resources: AsyncExitStack
    """What the session holds open (MCP servers, child agents): closed by `aclose`."""
    handoffs: Handoffs | None
    """The agents this one may ask (`agents:`), for `/ask-<name>`; None when there are none."""
    start_context: tuple[str, ...]
    """Context the sessionStart hooks added: it rides along with the first question."""

    def __init__(
        self,
        config: AgentConfig,
        engine: HookEngine,
        model: ModelClient,
        gate: ToolGate,
        history: History,
        project_dir: Path,
        resources: AsyncExitStack | None = None,
        handoffs: Handoffs | None = None,
        start_context: tuple[str, ...] = (),
    ) -> None:
        self.config = config
        self.engine = engine
        self.model = model
        self.gate = gate
        self.history = history
        self.project_dir = project_dir
        self.resources = AsyncExitStack() if resources is None else resources
        self.handoffs = handoffs
        self.start_context = start_context

    def take_start_context(self) -> tuple[str, ...]:
        """The sessionStart context, once: the first turn gets it, later ones do not."""
        context, self.start_context = self.start_context, ()
        return context

    @property
    def session_id(self) -> str:
        return self.engine.session_id

    def model_messages(self, context: Sequence[str] = ()) -> list[Message]:
        """What the model reads: the system prompt, the conversation, this turn's context.

        Hook context is appended to the turn's question in a tagged block, in the
        requests of this turn only; the history keeps the question alone.
        """
        messages = [Message("system", self.config.system), *self.history.messages]
        if context:
            index = max(i for i, m in enumerate(messages) if m.role == "user")
            block = "\n".join(context)
            question = messages[index]
            messages[index] = Message(
                "user", f'{question.content}\n\n<context source="hooks">\n{block}\n</context>'
            )
        return messages

    def tool_specs(self) -> list[ToolSpec]:
        return self.gate.tools.specs()

    async def compact_if_needed(self) -> Outcome | None:
        """Compact the history once it is past the budget; the preCompact hooks run first
        (`trigger: auto`) and a block skips this compaction. Their outcome, or None where
        no compaction was due."""
        budget = self.config.context_budget
        if self.history.size() <= budget or len(self.history.messages) <= KEEP_RECENT:
            return None
        pre = await self.engine.run("preCompact", {"trigger": "auto", "custom_instructions": ""})
        if not pre.blocked:
            await self.history.compact(self.model, self.config.system, budget)
        return pre

    async def aclose(self) -> None:
        try:
            await self.resources.aclose()
        finally:
            self.history.close()
            try:
                await self.engine.aclose()
            finally:
                await self.model.aclose()


async def open_agent(
    agent_file: Path,
    *,
    notify: Callable[[str], None],
    consent: Consent,
    store: SessionStore | None = None,
    resume: str | None = None,
    continue_last: bool = False,
    asked_depth: int = 0,
    ask_depth_limit: int | None = None,
    ask_display: AskDisplay | None = None,
    team_display: TeamDisplay | None = None,
    extra_tools: Sequence[Tool] = (),
    project_dir: Path | None = None,
    trusted_digest: str | None = None,
    asked_as: str | None = None,
    caller_deny: Sequence[str] = (),
) -> AgentSession:
    """Check trust, read `agent_file`, open the session, run `sessionStart`; raises on a block.

    An agent file whose trust closure is not trusted as it is now raises `Untrusted`
    before anything it names runs or is sent. Then start the file's MCP servers; one
    that fails is a notice and its tools are absent. `project_dir` (default: the
    working directory) is where the tools work. `trusted_digest`: see `require_trust`.
    `asked_as`: the name the asker gave this agent, for its hooks. `caller_deny`: the
    asker's deny rules (its own and those it runs under), which bind this agent too.
    A file that declares `team:` gets the supervisor's tools; `team_display` shows the
    team's tasks (by default as notices).
    """
    trust_store = TrustStore(store.home if store is not None else None)
    config, trusted = load_trusted(agent_file, store=trust_store, expect_digest=trusted_digest)
    check_sandbox(config, notify)
    # Built first: a broken model setting or script must stop the run before a session
    # file exists or a hook has run.
    model = make_model(config.model_spec(), config.base_dir)
    project_dir = Path.cwd() if project_dir is None else project_dir
    store = store or SessionStore()
    # Chosen first: a session whose file cannot be written keeps the id its notice named.
    fresh_id = new_session_id()
    try:
        session, source = _open_session(
            store, config, project_dir, (resume, continue_last, fresh_id), notify
        )
    except BaseException:
        await model.aclose()
        raise
    session_id = session.id if session is not None else fresh_id
    transcript = transcript_path(store.home, session_id)
    env_file = envfile.create(store.home, session_id)
    engine = HookEngine(
        config.hooks, session_id=session_id, project_dir=str(project_dir),
        asked_depth=asked_depth, pinned=trusted.pins(),
        environ={**os.environ, TRANSCRIPT_ENV: str(transcript), **_programs(project_dir)},
        transcript_path=str(transcript), permission_mode=permission_mode(config, consent),
        asked_agent=asked_as, observer=observer_for(config.telemetry, os.environ),
        env_file=None if env_file is None else str(env_file),
    )  # fmt: skip
    resumed = read_for_resume(session)  # the file, read once, as far back as needed
    history = History.load(session, notify, resumed.entries)
    try:
        # Written before the first hook runs: sessionStart hooks of a resumed session read it.
        history.transcript = Transcript.start(
            store.home, session_id, model=_model_name(config), cwd=str(project_dir), notify=notify,
            recorded=resumed.recorded,
        )  # fmt: skip
        # What `hooks check` warns about, a session says too: a guard its own shell
        # cannot parse would otherwise block every question with no reason shown.
        for warning in await lint_config(config.hooks, config.path.parent):
            notify(f"warning: {warning}")
        for warning in rule_warnings(config):
            notify(f"warning: {config.path}: {warning}")
        start = await engine.run("sessionStart", {"source": source})
        for notice in start.notices:
            notify(notice)
        if start.halted:
            reason = start.halt_reason
            history.event("session_stopped", {"reason": reason})
            await _report_aborted_run(engine, notify)
            raise SessionStopped(f"the session was stopped by a sessionStart hook: {reason}")
    except BaseException:  # blocked, failed or cancelled: let go of the session file
        history.close()
        await engine.aclose()
        await model.aclose()
        raise
    tools = _tool_registry(config, extra_tools)
    context = _tool_context(config, project_dir, store.home, trusted, trust_store, session_id)
    context = context._replace(
        env={**context.env, **envfile.applied(env_file, context.env, notify)}
    )
    boundaries = Boundaries.of(context)
    child_env = floor_env(context.sandbox, boundaries.floor(), boundaries.kept())
    handoffs = None
    if config.agents:  # the hand-off and team modules: only a file that names agents
        from hookgate.handoff import AskAgentTool, NoticeDisplay, handoffs_for

        handoffs = handoffs_for(
            config, engine, ask_display or NoticeDisplay(notify), project_dir=project_dir,
            depth=asked_depth, inherited_limit=ask_depth_limit, inherited_deny=caller_deny,
            trusted_digests=asked_digests(config.agents, trust_store), env=child_env,
        )  # fmt: skip
        if handoffs is not None:
            tools.add(AskAgentTool(handoffs, lambda: history.messages))
    if config.team is not None:
        from hookgate.team import NoticeTeamDisplay, team_for, team_tools

        team = team_for(
            config, engine, team_display or NoticeTeamDisplay(notify), project_dir=project_dir,
            depth=asked_depth, inherited_limit=ask_depth_limit, inherited_deny=caller_deny,
            trusted_digests=asked_digests(config.team.members, trust_store), env=child_env,
        )  # fmt: skip
        for tool in team_tools(team) if team is not None else ():
            tools.add(tool)
    gate = ToolGate(
        engine=engine,
        tools=tools,
        policy=Policy(
            config.permissions.allow,
            (*config.permissions.deny, *caller_deny),
            project_dir,
            config.permissions.ask,
        ),
        consent=AlwaysAllow() if config.yolo else consent,
        context=context,
        caps=CallCaps(config.max_tool_calls, config.max_argument_bytes),
        asker=consent,
        approvals=Approvals(record=history.event),
    )
    agent = AgentSession(
        config, engine, model, gate, history, project_dir, handoffs=handoffs,
        start_context=start.context,
    )  # fmt: skip
    if context.private_tmp is not None:
        agent.resources.callback(_remove_tree, context.private_tmp)
    if config.mcp_servers:
        await _add_mcp_tools(agent, notify)
    return agent


def permission_mode(config: AgentConfig, consent: Consent) -> str:
    """Claude Code's name for how this session's tool calls are consented to."""
    if config.yolo:
        return "bypassPermissions"
    return "dontAsk" if isinstance(consent, AlwaysDeny) else "default"


def _model_name(config: AgentConfig) -> str:
    spec = config.model_spec()
    return spec if isinstance(spec, str) else str(spec.get("name", ""))


async def _report_aborted_run(engine: HookEngine, notify: Callable[[str], None]) -> None:
    """Run postGeneration for a run that ends before its first turn: a Stop hook (an
    audit, a clean-up) must hear of every run, the aborted one included."""
    payload = {"prompt": ABORTED_MARKER, "answer": None, "outcome": "aborted", "continued": False}
    stop = await engine.run("postGeneration", payload)
    for notice in stop.notices:
        notify(notice)


def _tool_context(
    config: AgentConfig,
    project_dir: Path,
    home: Path,
    trusted: TrustedAgent,
    trust_store: TrustStore,
    session_id: str,
) -> ToolContext:
    """Where the tools work and what they never touch; no secret reaches their processes.

    The sandbox is the agent file's, held within an asking agent's (`inherited`); a
    session that confines commands gets a private temporary directory of its own. The
    trusted files are never written, nor what programs outside the sandbox run from.
    """
    sandbox = inherited(config.sandbox, os.environ)
    private_tmp = None
    if sandbox.on and "shell" in config.tools:
        private_tmp = private_directory(f"hookgate-{session_id[:12]}")
    return ToolContext(
        project_dir=project_dir,
        env=shell_environment(os.environ, config.shell.keep_env),
        shell_timeout=config.shell_timeout,
        workspace_dirs=config.workspace_dirs,
        hookgate_home=home.resolve(),
        protected_files=trusted.protected_files(trust_store),
        runs_from=frozenset(trusted.environments() | found_by_name(os.environ) | set(sandbox.kept)),
        shell_limits=config.shell.limits,
        web=config.web,
        sandbox=sandbox,
        private_tmp=private_tmp,
    )


def _remove_tree(path: Path) -> None:
    if path.exists():  # made by the session's first shell call, which imported shutil
        import shutil

        shutil.rmtree(path, ignore_errors=True)


def check_sandbox(config: AgentConfig, notify: Callable[[str], None]) -> None:
    """Refuse a session whose commands the agent file confines where this machine cannot.

    Probed only where something would run confined: the shell tool, or an MCP server
    with `sandbox: true`. `mode: off` under `yolo: true` is said at every start.
    """
    sandbox: SandboxSettings = inherited(config.sandbox, os.environ)
    if not sandbox.on:
        if config.yolo and "shell" in config.tools:
            notify(
                "warning: sandbox mode is off and yolo is true: the model's shell commands "
                "run unconfined and without asking"
            )
        return
    confined = "shell" in config.tools or any(
        getattr(server, "sandbox", False) for server in config.mcp_servers.values()
    )
    if not confined:
        return
    from hookgate.tools.sandbox.probe import probe

    # A success is remembered in the cache, so that a session's start (an asked
    # agent's, a team member's) does not start a sandbox every time (~4 ms).
    if (problem := probe(remember=cache_dir())) is not None:
        raise ConfigError(
            f"{config.path}: the sandbox (sandbox: mode {sandbox.mode.value}) cannot be set up "
            f"on this machine: {problem}",
            hint="install bubblewrap, or run commands unconfined with "
            "`sandbox: {mode: off}` in the agent file (hookgate hooks check says what this "
            "machine can enforce)",
        )


def _programs(project_dir: Path) -> dict[str, str]:
    """The `PATH` of the session's hooks: not the project, the model's to write."""
    path = os.environ.get("PATH")
    return {} if path is None else {"PATH": programs_path(path, str(project_dir))}


def _confinement(ctx: ToolContext) -> tuple[Callable[[list[str]], list[str]], Boundaries]:
    """How an MCP server with `sandbox: true` runs: under the reaper, in this session's
    boundaries (`workspace-write` ones where the session's own sandbox is off); and the
    boundaries, whose `RUN_OUTSIDE` entries a call makes are set aside."""
    from hookgate.tools.sandbox.bwrap import confine
    from hookgate.tools.shell import reaped_command

    if not ctx.sandbox.on:
        own = ctx.sandbox
        ctx = ctx._replace(sandbox=SandboxSettings(writable=own.writable, hidden=own.hidden))
    boundaries = Boundaries.of(ctx._replace(private_tmp=None))  # the shell's, not theirs
    return lambda argv: confine(
        reaped_command(argv, UNLIMITED, scoped=True), boundaries
    ), boundaries


def _tool_registry(config: AgentConfig, extra_tools: Sequence[Tool]) -> ToolRegistry:
    """The built-in tools the agent file offers, then any the caller adds."""
    return ToolRegistry([*builtin_tools(config.tools), *extra_tools])


async def _add_mcp_tools(agent: AgentSession, notify: Callable[[str], None]) -> None:
    """Start the MCP servers into `agent.resources` and register their tools."""
    from hookgate.mcp.servers import start_mcp_servers  # the SDK takes ~1 s to import

    try:
        confine, boundaries = _confinement(agent.gate.context)
        tools = await start_mcp_servers(
            agent.config.mcp_servers, agent.resources, notify, project_dir=agent.project_dir,
            confine=confine, boundaries=boundaries,
        )  # fmt: skip
    except BaseException:
        await agent.aclose()
        raise
    for tool in tools:
        agent.gate.tools.add(tool)


def _open_session(
    store: SessionStore,
    config: AgentConfig,
    project_dir: Path,
    which: tuple[str | None, bool, str],
    notify: Callable[[str], None],
) -> tuple[Session | None, str]:
    """The session to resume (`which`: the id to resume, or whether to continue the
    latest) or a new one (named by `which`'s fresh id), locked; None when a new one
    cannot be written.

    A resumed session another process holds is `SessionBusy`: two writers would
    interleave their turns. A full disk or a read-only directory costs the user a
    notice, not the run: the session goes on in memory, as it does when a write fails
    later.
    """
    resume, continue_last, fresh_id = which
    store.make_private(notify)
    session: Session | None = None
    if resume:
        session = store.open(resume)
    elif continue_last:
        session = store.latest(cwd=str(project_dir), agent_file=str(config.path.absolute()))
    if session is not None:
        session.lock()
        return session, "resume"
    try:
        session = store.create(
            agent_file=str(config.path.absolute()), cwd=str(project_dir), session_id=fresh_id
        )
        session.lock()
    except SessionError as exc:
        notify(f"history is not saved: {exc}")
        return None, "startup"
    return session, "startup"
