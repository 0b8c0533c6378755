"""Line mode: `hookgate` in a terminal, one question after another.

Enter sends, Esc then Enter (or Alt-Enter) starts a new line; Ctrl-C cancels the
running turn (or clears the line), Ctrl-D exits. Commands: /help, /hooks, /exit.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings

from hookgate.agent import AgentSession, open_agent
from hookgate.frontends.terminal import TerminalConsent, notice_line
from hookgate.hooks import EVENTS
from hookgate.messages import ToolCall
from hookgate.session import SessionStore
from hookgate.tools import ToolResult
from hookgate.turn import PromptBlocked, TurnFailed, run_turn

HELP = """\
Type a question and press Enter; Esc Enter adds a line.
  /hooks   list the hooks of this session, in the order they run
  /help    this text
  /exit    leave (or Ctrl-D); Ctrl-C cancels a running turn"""


class LineView:
    """Streams the answer to stdout as it arrives; notices and tool calls on stderr."""

    def __init__(self) -> None:
        self.streamed = False

    def answer_text(self, delta: str) -> None:
        self.streamed = True
        sys.stdout.write(delta)
        sys.stdout.flush()

    def notice(self, text: str) -> None:
        self._end_line()
        notice_line(text)

    def tool_started(self, call: ToolCall) -> None:
        self._end_line()
        notice_line(f"→ {call.name} {_short(dict(call.arguments))}")

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        if result.is_error:
            notice_line(f"✗ {call.name}: {_short(result.content)}")

    def _end_line(self) -> None:
        if self.streamed:
            sys.stdout.write("\n")
            self.streamed = False


async def line_mode(agent_file: Path, *, resume: str | None, continue_last: bool) -> int:
    store = SessionStore()
    agent = await open_agent(
        agent_file, notify=notice_line, consent=TerminalConsent(), store=store,
        resume=resume, continue_last=continue_last,
    )  # fmt: skip
    notice_line(f"session {agent.session_id} — /help for help, Ctrl-D to leave")
    prompt: PromptSession[str] = PromptSession(
        history=FileHistory(str(store.home / "input_history")), key_bindings=_bindings()
    )
    try:
        while True:
            try:
                text = await prompt.prompt_async("› ")
            except KeyboardInterrupt:
                continue
            except EOFError:
                return 0
            if not await _handle(agent, text.strip()):
                return 0
    finally:
        await agent.aclose()


async def _handle(agent: AgentSession, text: str) -> bool:
    """Run one line; False when the user asked to leave."""
    if not text:
        return True
    if text in ("/exit", "/quit"):
        return False
    if text == "/help":
        print(HELP)
    elif text == "/hooks":
        print(describe_hooks(agent))
    elif text.startswith("/"):
        notice_line(f"unknown command {text.split()[0]!r}; /help lists them")
    else:
        await _turn(agent, text)
    return True


async def _turn(agent: AgentSession, question: str) -> None:
    view = LineView()
    task = asyncio.ensure_future(run_turn(agent, question, view))
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, task.cancel)
    try:
        outcome = await task
    except asyncio.CancelledError:
        view.notice("turn cancelled")
        return
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    view._end_line()
    if isinstance(outcome, PromptBlocked):
        print(outcome.response)
    elif isinstance(outcome, TurnFailed):
        notice_line(f"the turn failed: {outcome.message}")


def describe_hooks(agent: AgentSession) -> str:
    lines = []
    for event in EVENTS:
        for index, hook in enumerate(agent.engine.hooks_for(event), 1):
            matcher = f" matcher {hook.matcher.pattern!r}" if hook.matcher else ""
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
