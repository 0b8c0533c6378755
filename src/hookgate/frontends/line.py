"""Line mode: `hookgate` in a terminal, one question after another.

Enter sends, Esc then Enter (or Alt-Enter) starts a new line; Ctrl-C cancels the
running turn (or clears the line), Ctrl-D exits; SIGTERM or SIGHUP (a closed terminal)
cancels the turn, lets its postGeneration hooks run and exits with 143 or 129. Commands: /help, /hooks, /exit,
/approve ID (let a call a guardrail blocked through once), and /ask-<name> QUESTION
for each agent the file lists under `agents:`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import sys
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings

from hookgate.frontends.askcommand import COMMAND_PREFIX, ask_from_user, parse_ask_command
from hookgate.frontends.status import STATUS
from hookgate.frontends.terminal import (
    TerminalConsent,
    TerminalTeamDisplay,
    notice_line,
    print_answer,
    rewritten_line,
    use_colour,
    write_out,
    write_text,
)
from hookgate.handoff import HandoffOutcome, Refused
from hookgate.hooks import EVENTS
from hookgate.messages import ToolCall
from hookgate.runtime.agent import AgentSession, open_agent
from hookgate.runtime.approvals import ApproveMode
from hookgate.runtime.consent import call_line
from hookgate.runtime.interrupts import Interrupts
from hookgate.runtime.turn import PromptBlocked, run_turn
from hookgate.security.trust.check import Untrusted
from hookgate.security.trust.command import offer_trust
from hookgate.security.trust.store import TrustStore
from hookgate.store.lock import SessionBusy
from hookgate.store.session import FILE_MODE, SessionStore
from hookgate.tools import ToolResult
from hookgate.view import MarkKind, NoticeKind, ToolMark

if TYPE_CHECKING:
    from hookgate.frontends.markdown import MarkdownAnswer

HELP = """\
Type a question and press Enter; Esc Enter adds a line.
  /hooks   list the hooks of this session, in the order they run
  /approve ID   let the next call identical to guardrail block ID through it, once
  /ask-<name> QUESTION   hand QUESTION to another agent of the file's 'agents:'
  /help    this text
  /exit    leave (or Ctrl-D); Ctrl-C cancels a running turn"""
#: What the status line says while the hooks and the model work on a question.
THINKING = "thinking"
#: The signals that end line mode; SIGINT (Ctrl-C) only cancels the turn under way.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class CheckedFileHistory(FileHistory):
    """The input history file, which never keeps a question a hook blocked.

    prompt_toolkit stores a line as soon as it is entered; this one holds it until the
    turn has told whether the hooks let it through (`keep`) or not (`drop`). A dropped
    line stays in memory for the arrow keys of this session only. The file is private
    (0600). One that cannot be read or written (full disk, read-only home) costs a
    notice, not the session: the history goes on in memory.
    """

    def __init__(self, filename: str, notify: Callable[[str], None]) -> None:
        super().__init__(filename)
        self._pending: list[str] = []
        self._notify = notify
        self._in_memory = False

    def load_history_strings(self) -> Iterable[str]:
        try:
            return list(super().load_history_strings())
        except OSError as exc:
            self._give_up("read", exc)
            return []

    def store_string(self, string: str) -> None:
        self._pending.append(string)

    def keep(self) -> None:
        pending, self._pending = self._pending, []
        if self._in_memory:
            return
        try:
            fd = os.open(self.filename, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
            try:
                mode = stat.S_IMODE(os.fstat(fd).st_mode)
                if mode & ~FILE_MODE:  # an older file, made before it was private
                    os.fchmod(fd, mode & FILE_MODE)
            finally:
                os.close(fd)
            for string in pending:
                super().store_string(string)
        except OSError as exc:
            self._give_up("write", exc)

    def _give_up(self, verb: str, exc: OSError) -> None:
        self._in_memory = True
        self._notify(
            f"input history is kept in memory only: cannot {verb} {os.fsdecode(self.filename)}: "
            f"{exc.strerror or exc}"
        )

    def drop(self) -> None:
        self._pending.clear()


class AnswerStream:
    """An answer streamed to stdout as it arrives: markdown drawn block by block on a
    colour terminal, the text as it comes otherwise."""

    def __init__(self) -> None:
        self.streamed = False
        self._markdown: MarkdownAnswer | None = None
        if use_colour(sys.stdout):
            from hookgate.frontends.markdown import MarkdownAnswer  # rich: only to render

            self._markdown = MarkdownAnswer(sys.stdout)

    def add(self, delta: str) -> None:
        self.streamed = True
        if self._markdown is not None:
            self._markdown.add(delta)
        else:
            write_text(delta, sys.stdout)

    def end(self) -> None:
        """End the answer streamed so far (drawing its last block), if any."""
        if not self.streamed:
            return
        self.streamed = False
        if self._markdown is not None:
            self._markdown.finish()
        else:
            write_out("\n", sys.stdout)


class LineAskDisplay:
    """A hand-off's answer streams to stdout after a notice naming the agent, drawn as
    the agent's own answers are."""

    shows_answer = True

    def __init__(self) -> None:
        self._answer = AnswerStream()

    def notice(self, text: str) -> None:
        self._answer.end()
        notice_line(text)

    def asked_text(self, agent: str, delta: str) -> None:
        if not self._answer.streamed:
            notice_line(f"{agent} answers:")
        self._answer.add(delta)

    def asked_done(self, agent: str) -> None:
        self._answer.end()


class LineView:
    """Streams the answer to stdout as it arrives, as markdown on a colour terminal;
    notices and tool calls on stderr, each kind in its style."""

    def __init__(self) -> None:
        self._answer = AnswerStream()

    def answer_text(self, delta: str) -> None:
        self._answer.add(delta)

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        self.end_answer()
        notice_line(text, kind=kind)

    def tool_started(self, call: ToolCall) -> None:
        self.end_answer()
        notice_line(f"→ {_short(call_line(call.name, call.arguments))}")
        STATUS.show(f"running {call.name}")

    def tool_marked(self, call: ToolCall, mark: ToolMark) -> None:
        if mark.kind is MarkKind.REWRITTEN:  # denials: `tool_finished` says them
            notice_line(rewritten_line(call, mark))

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        if result.denied:
            notice_line(f"✗ {call.name} denied: {_short(result.content)}", kind=NoticeKind.DENIED)
        elif result.is_error:
            notice_line(f"✗ {call.name}: {_short(result.content)}", kind=NoticeKind.ERROR)
        STATUS.show(THINKING)  # the model reads the result next

    def end_answer(self) -> None:
        """End the answer streamed so far (rendering its last block), if any."""
        self._answer.end()


async def line_mode(agent_file: Path, *, resume: str | None, continue_last: bool) -> int:
    store = SessionStore()
    agent = await _open_or_offer_new(agent_file, store, resume, continue_last)
    if agent is None:
        return 1
    notice_line(f"session {agent.session_id} — /help for help, Ctrl-D to leave")
    agent.gate.approvals.mode = ApproveMode.COMMAND
    history = CheckedFileHistory(str(store.home / "input_history"), notice_line)
    prompt: PromptSession[str] = PromptSession(history=history, key_bindings=_bindings())
    # Ctrl-C cancels a turn (see `_turn`); SIGTERM or SIGHUP ends the session, after the
    # turn under way has been cancelled and its postGeneration hooks have run.
    with Interrupts(STOP_SIGNALS) as interrupts:
        try:
            while interrupts.exit_code is None:
                try:
                    text = await interrupts.run(prompt.prompt_async("› "))
                except KeyboardInterrupt:
                    continue
                except EOFError:
                    return 0
                if isinstance(text, str):
                    leave = not await interrupts.run(_handle(agent, text.strip(), history))
                    if leave and interrupts.exit_code is None:
                        return 0
        finally:
            await agent.aclose()  # a signal now is only remembered: the servers must stop
    code = interrupts.exit_code
    assert code is not None
    notice_line("interrupted; the session was closed")
    return code


async def _open_or_offer_new(
    agent_file: Path, store: SessionStore, resume: str | None, continue_last: bool
) -> AgentSession | None:
    """The agent on the session asked for; if another process holds it, offer a new one."""

    async def open_session(resume: str | None, continue_last: bool) -> AgentSession:
        async def open_() -> AgentSession:
            return await open_agent(
                agent_file, notify=notice_line, consent=TerminalConsent(), store=store,
                resume=resume, continue_last=continue_last, ask_display=LineAskDisplay(),
                team_display=TerminalTeamDisplay(),
            )  # fmt: skip

        try:
            return await open_()
        except Untrusted:
            # On a terminal the owner is here: show what trusting means and ask, inline.
            if not sys.stdin.isatty() or not offer_trust(agent_file, TrustStore(store.home)):
                raise
            return await open_()

    try:
        return await open_session(resume, continue_last)
    except SessionBusy as exc:
        notice_line(str(exc))
    try:
        answer = await PromptSession[str]().prompt_async("start a new session instead? [y/N] ")
    except (EOFError, KeyboardInterrupt):
        return None
    if answer.strip().lower() not in ("y", "yes"):
        return None
    return await open_session(None, False)


async def _handle(agent: AgentSession, text: str, history: CheckedFileHistory) -> bool:
    """Run one line; False when the user asked to leave."""
    if not text:
        return True
    if text in ("/exit", "/quit"):
        return False
    if text == "/help":
        print(HELP)
    elif text == "/hooks":
        print_answer(describe_hooks(agent))
    elif text.split()[0] == "/approve":
        _approve(agent, text.removeprefix("/approve").strip())
    elif text.startswith(COMMAND_PREFIX):
        if not await _ask(agent, text):
            history.drop()  # a refused hand-off: the question may hold what preAsk stopped
            return True
    elif text.startswith("/"):
        notice_line(f"unknown command {text.split()[0]!r}; /help lists them")
    elif not await _turn(agent, text):
        history.drop()  # it may hold what the hook stopped: a key, a password
        return True
    history.keep()
    return True


async def _turn(agent: AgentSession, question: str) -> bool:
    """Run one turn; False when the hooks did not let the question through."""
    view = LineView()
    task = asyncio.ensure_future(run_turn(agent, question, view))
    loop = asyncio.get_running_loop()

    def cancel_once() -> None:
        if not task.cancelling():  # a second Ctrl-C must not cut postGeneration short
            task.cancel()

    loop.add_signal_handler(signal.SIGINT, cancel_once)
    STATUS.show(THINKING)
    try:
        outcome = await task
    except asyncio.CancelledError:
        view.notice("turn cancelled")
        return False  # perhaps before preGeneration had checked it
    finally:
        STATUS.clear()
        loop.remove_signal_handler(signal.SIGINT)
    view.end_answer()
    if isinstance(outcome, PromptBlocked):
        print_answer(outcome.response)
        return False
    return True  # a failed turn has said why, as a notice, when it failed


async def _ask(agent: AgentSession, text: str) -> bool:
    """`/ask-<name> QUESTION`, through the same `delegate` as the ask_agent tool.

    False when the hand-off was refused or cancelled.
    """
    parsed = parse_ask_command(text)
    assert parsed is not None
    name, question = parsed
    if agent.handoffs is None:
        notice_line("this agent file lists no agents to ask (see 'agents:')")
        return True
    if not question:
        notice_line(f"usage: {COMMAND_PREFIX}{name} QUESTION")
        return True
    outcome = await _until_ctrl_c(ask_from_user(agent.handoffs, agent.history, name, question))
    if outcome is None:
        notice_line("hand-off cancelled")
        return False
    if isinstance(outcome, Refused):
        notice_line(f"hand-off refused: {outcome.reason}")
        if outcome.response:
            print_answer(outcome.response)
        return False
    if outcome.error is not None:
        notice_line(f"the hand-off to {name} failed: {outcome.error}")
    return True


async def _until_ctrl_c(work: Coroutine[Any, Any, HandoffOutcome]) -> HandoffOutcome | None:
    """Run a hand-off; Ctrl-C cancels it (the asked agent is stopped). None if cancelled."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()

    def cancel_once() -> None:
        if not task.cancelling():  # a second Ctrl-C must not cut subagentStop short
            task.cancel()

    loop.add_signal_handler(signal.SIGINT, cancel_once)
    try:
        return await task
    except asyncio.CancelledError:
        if task.cancelled():
            return None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def _approve(agent: AgentSession, block_id: str) -> None:
    approvals = agent.gate.approvals
    block = approvals.approve(block_id, "/approve")
    if block is not None:
        notice_line(f"approved once: the next {block.tool} call with these exact arguments "
                    f"skips guardrail {block.rule!r}; every other hook and rule still applies",
                    kind=NoticeKind.CHANGED)  # fmt: skip
        return
    pending = ", ".join(b.id for b in approvals.pending()) or "none"
    notice_line(f"no guardrail block {block_id!r} to approve (blocks now: {pending})",
                kind=NoticeKind.ERROR)  # fmt: skip


def describe_hooks(agent: AgentSession) -> str:
    lines = []
    for event in EVENTS:
        for index, hook in enumerate(agent.engine.hooks_for(event), 1):
            matcher = f" matcher {hook.matcher_shown}" if hook.matcher else ""
            lines.append(f"{event} {index}. {hook.name}{matcher} (onError {hook.on_error.value})")
    return "\n".join(lines) or "no hooks"


def _bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: object) -> None:
        event.current_buffer.insert_text("\n")  # type: ignore[attr-defined]

    return bindings


def _short(value: object, limit: int = 120) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
