"""`hookgate acp`: the Agent Client Protocol over stdio, for Zed and other editors.

Each ACP session is an `AgentSession` of its own (engine, history, MCP servers); each
prompt is one `run_turn`, so the hooks apply as in every front end. The turn streams
as session updates (`AcpView`); consent is `session/request_permission`; notices are
agent thought chunks and stderr lines. `session/cancel` cancels the turn task:
`postGeneration` still runs, and the prompt answers `cancelled`. stdout carries only
JSON-RPC: fd 1 is handed to the protocol and replaced by stderr for everything else.
`session/close` ends a session the same way and releases what it holds.
"""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import sys
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.interfaces import Agent, Client
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
)

from hookgate.frontends.acp.session import AcpChannel, AcpView, editor_mcp_servers, prompt_text
from hookgate.frontends.acp.wire import GuardedNdjson, open_stdio
from hookgate.frontends.output import EXIT_BROKEN_PIPE, EXIT_OUTPUT_FAILED, output_failure
from hookgate.frontends.terminal import notice_line
from hookgate.hooks import HookgateError
from hookgate.hooks.process import reap_orphans
from hookgate.runtime.agent import AgentSession, open_agent
from hookgate.runtime.approvals import ApproveMode
from hookgate.runtime.interrupts import Interrupts, cancel_started
from hookgate.runtime.turn import Answered, PromptBlocked, TurnFailed, TurnOutcome, run_turn
from hookgate.security.trust.check import is_trusted, load_trusted
from hookgate.security.trust.closure import closure_of
from hookgate.store.session import SessionStore

AGENT_INFO = Implementation(name="hookgate", title="hookgate", version="0.1.0")
CANCELLED = PromptResponse(
    stop_reason="cancelled", field_meta={"hookgate": {"outcome": "cancelled"}}
)


class AcpSession:
    """One ACP session: its agent, its channel to the editor, the turn running in it."""

    def __init__(self, agent: AgentSession, channel: AcpChannel) -> None:
        self.agent = agent
        self.channel = channel
        self.turn: asyncio.Task[TurnOutcome] | None = None
        self.turn_started = asyncio.Event()

    async def cancel_turn(self) -> asyncio.Task[TurnOutcome] | None:
        """Cancel the running turn, if there is one; its task, to wait for."""
        turn = self.turn
        if turn is None:
            return None
        await cancel_started(turn, self.turn_started)
        return turn


class HookgateAcpAgent:
    """The ACP agent side: sessions by id, each prompt a turn of its session's agent."""

    def __init__(self, agent_file: Path, store: SessionStore) -> None:
        self._agent_file = agent_file
        self._store = store
        self._sessions: dict[str, AcpSession] = {}
        self._client: Client | None = None

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def client(self) -> Client:
        assert self._client is not None, "on_connect runs before any request"
        return self._client

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=False,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True),
                session_capabilities=SessionCapabilities(close=SessionCloseCapabilities()),
            ),
            agent_info=AGENT_INFO,
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        """Open a fresh `AgentSession` in `cwd`; the editor's MCP servers join the file's."""
        project_dir = _project_dir(cwd)
        channel = AcpChannel(self.client)
        try:
            agent = await open_agent(
                self._agent_file,
                notify=channel.notify,
                consent=channel,
                team_display=channel,
                store=self._store,
                project_dir=project_dir,
            )
        except HookgateError as exc:
            raise RequestError.internal_error({"message": str(exc)}) from exc
        channel.session_id = agent.session_id
        agent.gate.approvals.mode = ApproveMode.ASK
        agent.gate.approvals.ask = channel.approve_guardrail
        self._sessions[agent.session_id] = AcpSession(agent, channel)
        await _add_editor_servers(agent, mcp_servers or [], channel)
        return NewSessionResponse(session_id=agent.session_id)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        """Run one turn; its updates are all sent before this answers."""
        session = self._session(session_id)
        if session.turn is not None:
            raise RequestError.invalid_request({"message": "a prompt is already running"})
        view = AcpView(self.client, session_id)
        for notice in session.channel.take_pending():
            view.thought(notice)
        started = session.turn_started = asyncio.Event()

        async def turn() -> TurnOutcome:
            session.channel.view = view
            started.set()  # from here on, run_turn's cleanup is armed: cancel may land
            try:
                outcome = await run_turn(session.agent, prompt_text(prompt), view)
                if isinstance(outcome, PromptBlocked):
                    view.answer_text(outcome.response)
                return outcome
            finally:
                session.channel.view = None
                view.close()

        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(view.pump())
                session.turn = group.create_task(turn())
        finally:
            task, session.turn = session.turn, None
        if task is None or task.cancelled():
            return CANCELLED
        return _response(task.result())

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            await session.cancel_turn()

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """End a session: a running turn is cancelled as by `session/cancel` (its
        `postGeneration` runs), then its MCP servers stop and its model disconnects."""
        session = self._session(session_id)
        del self._sessions[session_id]  # from now on, a prompt to it is refused
        turn = await session.cancel_turn()
        if turn is not None:
            await asyncio.wait({turn})
        await session.agent.aclose()
        return CloseSessionResponse()

    async def aclose(self) -> None:
        """Close every session: their MCP servers stop, their models disconnect."""
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.agent.aclose()

    def _session(self, session_id: str) -> AcpSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"no session {session_id!r}"})
        return session


def _response(outcome: TurnOutcome) -> PromptResponse:
    """The stop reason for an outcome; `_meta.hookgate` names the outcome as hooks do."""
    if isinstance(outcome, Answered):
        return PromptResponse(
            stop_reason="end_turn", field_meta={"hookgate": {"outcome": "answered"}}
        )
    if isinstance(outcome, PromptBlocked):
        return PromptResponse(
            stop_reason="end_turn", field_meta={"hookgate": {"outcome": "blocked"}}
        )
    if isinstance(outcome, TurnFailed):
        raise RequestError.internal_error({"message": f"the turn failed: {outcome.message}"})
    return CANCELLED


async def _add_editor_servers(agent: AgentSession, servers: list[Any], channel: AcpChannel) -> None:
    """Start the MCP servers the editor passed, guarded like the agent file's own."""
    configs = editor_mcp_servers(servers, taken=agent.config.mcp_servers, notify=channel.notify)
    if not configs:
        return
    from hookgate.mcp.servers import start_mcp_servers

    tools = await start_mcp_servers(
        configs, agent.resources, channel.notify, project_dir=agent.project_dir
    )
    for tool in tools:
        agent.gate.tools.add(tool)


async def acp_mode(agent_file: Path) -> int:
    """Serve ACP on stdin/stdout until the editor closes stdin; 128+N on signal N.

    The first SIGINT, SIGTERM or SIGHUP stops serving: running turns are cancelled
    and their postGeneration hooks run; later signals are only remembered.
    """
    agent_file = _checked(agent_file)
    loop = asyncio.get_running_loop()
    stdio = await open_stdio(
        os.dup(sys.stdin.fileno()), _claim_stdout(), limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES
    )
    server = HookgateAcpAgent(agent_file, SessionStore())
    # A daemon that escaped its hook's group is ours to reap when it exits (we are its
    # subreaper): at once, not at the next hook, or each turn could leave a zombie.
    loop.add_signal_handler(signal.SIGCHLD, reap_orphans)
    with Interrupts() as interrupts:
        # The router serves the methods an agent defines; the rest answer "not found".
        # session/close is still "unstable" to the SDK: the one such method defined here.
        serving = asyncio.ensure_future(interrupts.run(run_agent(
            cast(Agent, server), GuardedNdjson(stdio.reader, stdio.writer, stdio.output_lost),
            use_unstable_protocol=True,
        )))  # fmt: skip
        # stdout gone (closed by the editor, or failing): nobody reads the answers, stop
        # now rather than at the end of stdin, which may never come.
        stdio.lost.add_done_callback(lambda _: serving.cancel())
        try:
            await serving
        except asyncio.CancelledError:
            if not stdio.lost.done():
                raise
        finally:
            await server.aclose()
            await stdio.close()
            loop.remove_signal_handler(signal.SIGCHLD)
    if stdio.lost.done():
        return _output_lost(stdio.lost.result())
    if interrupts.exit_code is not None:
        notice_line("interrupted; every session was closed")
        return interrupts.exit_code
    return 0


def _output_lost(exc: OSError) -> int:
    """One line for a stdout that failed; 141 when the editor closed it, as for `| head`."""
    if isinstance(exc, BrokenPipeError) or exc.errno == errno.EPIPE:
        notice_line("stdout was closed (the editor left); every session was closed")
        return EXIT_BROKEN_PIPE
    print(output_failure(exc), file=sys.stderr, flush=True)
    return EXIT_OUTPUT_FAILED


def _project_dir(cwd: object) -> Path:
    """The session's `cwd`: an absolute path to an existing directory, or an error."""
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise RequestError.invalid_params({"message": f"cwd must be an absolute path: {cwd!r}"})
    if not os.path.isdir(cwd):
        raise RequestError.invalid_params({"message": f"cwd is not a directory: {cwd!r}"})
    return Path(cwd)


def _checked(agent_file: Path) -> Path:
    """The agent file, absolute; a broken one fails now, in one line, not per session.

    An untrusted one is not read here (reading imports its `python:` hooks): each
    `session/new` answers an error saying so until it is trusted.
    """
    if not is_trusted(agent_file):
        return closure_of(agent_file).root.path  # parsing alone: runs and imports nothing
    return load_trusted(agent_file)[0].path


def _claim_stdout() -> int:
    """fd 1 for JSON-RPC alone: a copy of it carries the protocol; fd 1 becomes stderr.

    Hooks, tools and MCP servers inherit fd 1 and a stray `print` writes there: after
    this, none of them can corrupt the protocol stream.
    """
    sys.stdout.flush()
    rpc = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return rpc
