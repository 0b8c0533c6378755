"""The window's sessions: each an agent, its event log, its turn and its consent requests.

One process serves several sessions (`Hub`). Each `WindowSession` keeps every event of
its life in this process in an `EventLog`, so a page that connects late (or reloads)
replays them; the turn runs as a task the session owns, cancelled as in ACP: never
before it has started, never twice, so its `postGeneration` hooks always run.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from hookgate.frontends.sessionlist import session_row
from hookgate.frontends.window import DEFAULT_MAX_SESSIONS
from hookgate.frontends.window.render import render_markdown
from hookgate.frontends.window.view import Event, WindowView, pretty
from hookgate.hooks import EVENTS, HookgateError
from hookgate.hooks.wording import BLOCKED_MARKER
from hookgate.messages import Message
from hookgate.runtime.agent import AgentSession, open_agent
from hookgate.runtime.approvals import ApproveMode, GuardrailBlock
from hookgate.runtime.consent import Answer, ConsentRequest, SessionConsent
from hookgate.runtime.interrupts import cancel_started
from hookgate.runtime.turn import (
    Answered,
    PromptBlocked,
    TurnFailed,
    TurnOutcome,
    run_turn,
)
from hookgate.store.session import SessionStore
from hookgate.view import NoticeKind

_ACTIVITY = itertools.count()


class TurnRunning(Exception):
    """A question was sent while the session's turn was still running."""


class WindowFull(HookgateError):
    """Every open session is running a turn, and there are as many as the window keeps."""


class EventLog:
    """Events in order, each numbered; readers wait for the ones after theirs.

    An answer is sent whole at each update, so only its latest update is kept: a page
    that connects later replays the answer once, and a long answer costs its own size
    in memory, not the sum of its updates.
    """

    def __init__(self) -> None:
        self.events: list[Event | None] = []
        self._grown = asyncio.Event()
        self._answers: dict[int, int] = {}
        """For each answer block, the number of its latest update."""

    def emit(self, event: Event) -> None:
        event["seq"] = len(self.events)
        if event["type"] == "answer":
            superseded = self._answers.get(event["block"])
            if superseded is not None:
                self.events[superseded] = None
            self._answers[event["block"]] = event["seq"]
        self.events.append(event)
        grown, self._grown = self._grown, asyncio.Event()
        grown.set()

    async def follow(self, start: int = 0) -> AsyncIterator[Event]:
        """Every event from number `start` on (but superseded updates), waiting for new
        ones, until the session is closed (its last event: `closed`)."""
        index = max(start, 0)
        while True:
            grown = self._grown
            while index < len(self.events):
                event = self.events[index]
                index += 1
                if event is not None:
                    yield event
                    if event["type"] == "closed":
                        return
            await grown.wait()


class WindowSession:
    """One session of the window: created with its log and consent, then given its agent."""

    def __init__(self) -> None:
        self.log = EventLog()
        self.consent = SessionConsent(self._ask_page)
        self.agent: AgentSession | None = None
        self.turn: asyncio.Task[None] | None = None
        self._started = asyncio.Event()
        self._blocks = itertools.count(1)
        self._asks = itertools.count(1)
        self._pending: dict[str, asyncio.Future[Answer]] = {}
        self.title = ""
        self.active = next(_ACTIVITY)
        """When the session was last used (opened, a turn started or ended): an order."""

    @property
    def id(self) -> str:
        assert self.agent is not None
        return self.agent.session_id

    def notify(self, text: str) -> None:
        self.log.emit({"type": "notice", "kind": NoticeKind.INFO.value, "text": text})

    def replay(self, messages: list[Message]) -> None:
        """Show a resumed session's conversation as it was recorded."""
        for message in messages:
            if message.role == "user":
                self.log.emit({"type": "question", "text": message.content})
                self.title = self.title or message.content
            elif message.role == "assistant":
                if message.content:
                    html = render_markdown(message.content)
                    self.log.emit({"type": "answer", "block": next(self._blocks), "html": html})
                for call in message.tool_calls:
                    self.log.emit({"type": "tool", "id": call.id, "name": call.name,
                                   "arguments": pretty(dict(call.arguments))})  # fmt: skip
            elif message.role == "tool" and message.tool_call_id is not None:
                self.log.emit({"type": "result", "id": message.tool_call_id,
                               "content": message.content, "is_error": False})  # fmt: skip

    def start_turn(self, question: str) -> None:
        """Run `question` as this session's turn, in a task the session owns."""
        if self.turn is not None:
            raise TurnRunning
        asked: Event = {"type": "question", "text": question}
        self.log.emit(asked)
        self.log.emit({"type": "turn_start"})
        self._started = asyncio.Event()
        self.active = next(_ACTIVITY)
        self.turn = asyncio.create_task(self._run(question, asked, self._started))

    async def _run(self, question: str, asked: Event, started: asyncio.Event) -> None:
        assert self.agent is not None
        view = WindowView(self.log.emit, self._blocks, asked)
        started.set()  # from here on, run_turn's cleanup is armed: cancel may land
        try:
            outcome = await run_turn(self.agent, question, view)
            view.end_block()
        except asyncio.CancelledError:
            view.notice("turn cancelled")
            self.log.emit({"type": "turn_end", "outcome": "cancelled"})
            raise
        except Exception as exc:  # a bug of ours: said on the page, the session lives on
            view.notice(f"the turn failed: {type(exc).__name__}: {exc}", NoticeKind.ERROR)
            outcome = TurnFailed(str(exc))
        finally:
            self.turn = None
            self.active = next(_ACTIVITY)
        if isinstance(outcome, PromptBlocked):
            # Kept as the history keeps it: a page that loads later sees the marker, not
            # what the hook stopped (a password); the page showing it now keeps it. (The
            # view made it so already, before the end-of-turn hooks ran.)
            asked["text"] = BLOCKED_MARKER.format(reason=outcome.reason)
            self.log.emit({"type": "blocked", "reason": outcome.reason,
                           "response": render_markdown(outcome.response)})  # fmt: skip
        else:  # the session list names a session by its first question the hooks let by
            self.title = self.title or question
        self.log.emit({"type": "turn_end", "outcome": _outcome_name(outcome)})

    async def cancel_turn(self) -> bool:
        """Cancel the running turn; False when there is none."""
        turn = self.turn
        if turn is None:
            return False
        await cancel_started(turn, self._started)
        return True

    async def approve_guardrail(self, block: GuardrailBlock) -> bool:
        """Ask the page whether a call a guardrail blocked may pass it, this once."""
        request = ConsentRequest(block.tool, block.arguments)
        guardrail = {"rule": block.rule, "reason": block.reason}
        return await self._ask_page(request, guardrail) is Answer.ONCE  # "always" is not asked

    async def _ask_page(
        self, request: ConsentRequest, guardrail: dict[str, str] | None = None
    ) -> Answer:
        """Show the consent dialog (a guardrail's, with its rule and reason, if given);
        the page's answer (`answer_consent`) decides."""
        ask_id = f"consent-{next(self._asks)}"
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._pending[ask_id] = future
        self.log.emit({"type": "consent", "id": ask_id, "tool": request.tool,
                       "arguments": pretty(dict(request.arguments)),
                       "details": request.details(), "rewritten": request.rewritten,
                       "guardrail": guardrail})  # fmt: skip
        try:
            return await future
        finally:
            del self._pending[ask_id]
            self.log.emit({"type": "consent_done", "id": ask_id})

    def answer_consent(self, ask_id: str, answer: Answer) -> bool:
        """Answer a pending consent request; False when there is none of that id."""
        future = self._pending.get(ask_id)
        if future is None or future.done():
            return False
        future.set_result(answer)
        return True

    def hooks(self) -> list[dict[str, Any]]:
        """The session's hooks in the order they run, event by event (as `/hooks`)."""
        assert self.agent is not None
        rows = []
        for event in EVENTS:
            for index, hook in enumerate(self.agent.engine.hooks_for(event), 1):
                matcher = hook.matcher_text or (hook.matcher.pattern if hook.matcher else None)
                rows.append({"event": event, "index": index, "name": hook.name,
                             "matcher": matcher, "on_error": hook.on_error.value})  # fmt: skip
        return rows

    async def aclose(self) -> None:
        """Cancel the running turn (its postGeneration hooks run), close the agent, and
        end the session's event streams (`closed`)."""
        try:
            turn = self.turn
            if turn is not None and await self.cancel_turn():
                await asyncio.wait({turn})
            if self.agent is not None:
                await self.agent.aclose()
        finally:
            self.log.emit({"type": "closed"})


class Hub:
    """The sessions this window process has open, by id."""

    def __init__(
        self,
        agent_file: Path,
        store: SessionStore,
        project_dir: Path,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
    ) -> None:
        self.agent_file = agent_file
        self.store = store
        self.project_dir = project_dir
        self.max_sessions = max_sessions
        self.sessions: dict[str, WindowSession] = {}
        self.closing = asyncio.Event()
        """Set when the server begins to stop: event streams end, so that it can."""

    async def open(self, resume: str | None = None) -> WindowSession:
        """A new session, or a saved one resumed; raises `HookgateError` (untrusted
        file, a session another process holds, a sessionStart block)."""
        if resume is not None and resume in self.sessions:
            return self.sessions[resume]
        await self._make_room()
        session = WindowSession()
        session.agent = await open_agent(
            self.agent_file, notify=session.notify, consent=session.consent,
            store=self.store, resume=resume, project_dir=self.project_dir,
        )  # fmt: skip
        session.agent.gate.approvals.mode = ApproveMode.ASK
        session.agent.gate.approvals.ask = session.approve_guardrail
        if resume is not None:
            session.replay(session.agent.history.messages)
        self.sessions[session.id] = session
        return session

    def listing(self) -> dict[str, list[dict[str, Any]]]:
        """The open sessions (newest last) and the saved ones not open here: those of
        this window's directory and agent file, which it can resume as they were."""
        opened = [{"id": s.id, "title": s.title, "running": s.turn is not None}
                  for s in self.sessions.values()]  # fmt: skip
        saved = []
        mine = self.store.of(cwd=str(self.project_dir), agent_file=str(self.agent_file))
        for info in mine:
            if info.id not in self.sessions:
                _, created, cwd, _, first, turns = session_row(info)
                saved.append({"id": info.id, "created": created, "cwd": cwd,
                              "title": first, "turns": turns})  # fmt: skip
        return {"open": opened, "saved": saved}

    async def _make_room(self) -> None:
        """Close the sessions idle the longest until one more fits; `WindowFull` when
        every open one is running a turn."""
        while len(self.sessions) >= self.max_sessions:
            idle = [s for s in self.sessions.values() if s.turn is None]
            if not idle:
                raise WindowFull(
                    f"all {len(self.sessions)} open sessions are running a turn (the window "
                    "keeps --max-sessions at most): wait for one, or close one"
                )
            await self.close(min(idle, key=lambda s: s.active).id)

    async def close(self, session_id: str) -> bool:
        """Close an open session (its turn cancelled first); False when none is open."""
        session = self.sessions.pop(session_id, None)
        if session is None:
            return False
        await session.aclose()
        return True

    async def aclose(self) -> None:
        sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            with contextlib.suppress(Exception):  # one failing must not keep the rest open
                await session.aclose()


def _outcome_name(outcome: TurnOutcome) -> str:
    if isinstance(outcome, Answered):
        return "answered"
    if isinstance(outcome, PromptBlocked):
        return "blocked"
    return "error"
