"""What the terminal front ends share: the one way text reaches a terminal, notice lines
on stderr, and asking for consent.

Everything hookgate writes that comes from the model, a tool, a hook or an asked agent
passes `visible` on its way to a terminal, so no escape sequence in it can drive the
terminal (OSC 52 clipboard writes, cursor moves, `\r` overprinting); hookgate's own
colours are added after it. The answer of `-p`/`--ask` on a pipe is left byte for byte.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from hookgate.frontends.status import STATUS
from hookgate.messages import ToolCall
from hookgate.runtime.consent import Answer, ConsentRequest, SessionConsent, call_line
from hookgate.tools import ToolResult
from hookgate.view import MarkKind, NoticeKind, ToolMark, visible

if TYPE_CHECKING:
    import asyncio

    from prompt_toolkit import PromptSession

    from hookgate.team import Task  # a team's modules: only a file that declares one
else:
    from hookgate.hooks.loop import asyncio  # imported once a turn waits

DIM, RESET = "\033[2m", "\033[0m"
#: How each kind of notice looks on a terminal that takes colour: each its own.
STYLES = {
    NoticeKind.INFO: DIM,
    NoticeKind.CHANGED: "\033[36m",  # cyan
    NoticeKind.DENIED: "\033[33m",  # yellow
    NoticeKind.BLOCKED: "\033[1;35m",  # bold magenta
    NoticeKind.ERROR: "\033[1;31m",  # bold red
}


def write_text(text: str, stream: TextIO) -> None:
    """Write text from the model, a tool, a hook or an asked agent to `stream`, made visible."""
    write_out(visible(text), stream)


def print_answer(text: str, stream: TextIO | None = None) -> None:
    """The product output of `-p` and `--ask`: made visible on a terminal, untouched on a pipe."""
    stream = stream or sys.stdout
    STATUS.clear()
    print(visible(text) if stream.isatty() else text, file=stream, flush=True)


def use_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return stream.isatty() and not os.environ.get("NO_COLOR")


def notice_line(text: str, stream: TextIO = sys.stderr, kind: NoticeKind = NoticeKind.INFO) -> None:
    """A notice: one line on stderr, in its kind's style where colour is on; never on
    stdout."""
    line = f"hookgate: {visible(text)}"
    write_out(f"{STYLES[kind]}{line}{RESET}\n" if use_colour(stream) else f"{line}\n", stream)


def write_out(text: str, stream: TextIO) -> None:
    """Write and flush `text`; a closed terminal (EIO, EPIPE) is not an error of ours.

    Once the terminal is gone (SIGHUP follows), the stream is pointed at /dev/null: the
    turn's cancellation, its postGeneration hooks and the exit must not fail on it.
    """
    STATUS.clear()  # a status line is never mixed into real output
    try:
        stream.write(text)
        stream.flush()
    except OSError:
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)


def rewritten_line(call: ToolCall, mark: ToolMark) -> str:
    """A call a hook rewrote: which hook, and what runs instead of what the model asked."""
    return f"↻ {call.name} rewritten by hook {mark.by!r}: {mark.reason}"


class StderrView:
    """A view for `-p`: keeps the answer for stdout, puts everything else on stderr."""

    def __init__(self, *, verbose: bool = False) -> None:
        self.verbose = verbose

    def answer_text(self, delta: str) -> None:
        pass  # the final answer is printed alone once the turn is over

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        notice_line(text, kind=kind)

    def tool_started(self, call: ToolCall) -> None:
        if self.verbose:
            notice_line(f"tool {call_line(call.name, call.arguments)}")

    def tool_marked(self, call: ToolCall, mark: ToolMark) -> None:
        if self.verbose and mark.kind is MarkKind.REWRITTEN:
            notice_line(rewritten_line(call, mark))

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        if self.verbose and result.denied:
            notice_line(f"tool {call.name} denied: {result.content[:200]}", kind=NoticeKind.DENIED)
        elif self.verbose and result.is_error:
            notice_line(f"tool {call.name} failed: {result.content[:200]}", kind=NoticeKind.ERROR)


class TerminalTeamDisplay:
    """A team on a terminal: each task's start, end and owner as a notice on stderr."""

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        notice_line(text, kind=kind)

    def tasks_changed(self, tasks: Sequence[Task]) -> None:
        pass  # the notices say it as it happens


class TerminalConsent:
    """Shows the whole call on stderr, then asks: once, always (this exact call), or no."""

    QUESTION = "allow it? [y] once, [a] always (this exact call, this session), [N] no: "

    def __init__(self) -> None:
        # Made at the first question: prompt_toolkit costs ~0.1 s to import, and most
        # sessions never ask (`-p` on a terminal with every call allowed or denied).
        self._session: PromptSession[str] | None = None
        self._consent = SessionConsent(self._answer)

    def waits(self, request: ConsentRequest) -> bool:
        return self._consent.waits(request)

    async def ask(self, request: ConsentRequest) -> bool:
        return await self._consent.ask(request)

    async def _answer(self, request: ConsentRequest) -> Answer:
        # The call goes to the terminal as plain lines, which it wraps itself: nothing
        # is cut, and a command hidden past a screenful of spaces still shows.
        notice_line(f"the model asks to run:\n{request.details()}")
        if self._session is None:
            from prompt_toolkit import PromptSession

            self._session = PromptSession()
        try:
            answer = await self._session.prompt_async(self.QUESTION)
        except EOFError:
            return Answer.DENY
        except KeyboardInterrupt:  # Ctrl-C cancels the turn, as it does while the model works
            task = asyncio.current_task()
            if task is not None:
                task.cancel()
            raise asyncio.CancelledError from None
        return ANSWERS.get(answer.strip().lower(), Answer.DENY)


#: What the consent question accepts; anything else denies.
ANSWERS = {"y": Answer.ONCE, "yes": Answer.ONCE, "a": Answer.ALWAYS, "always": Answer.ALWAYS}
