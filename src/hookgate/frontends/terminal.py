"""What the terminal front ends share: notice lines on stderr, and asking for consent."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TextIO

from prompt_toolkit import PromptSession

from hookgate.consent import ConsentRequest
from hookgate.messages import ToolCall
from hookgate.tools import ToolResult

DIM, RESET = "\033[2m", "\033[0m"


def use_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return stream.isatty() and not os.environ.get("NO_COLOR")


def notice_line(text: str, stream: TextIO = sys.stderr) -> None:
    """A notice: one line on stderr, dim where colour is on; never on stdout."""
    line = f"hookgate: {text}"
    write_out(f"{DIM}{line}{RESET}\n" if use_colour(stream) else f"{line}\n", stream)


def write_out(text: str, stream: TextIO) -> None:
    """Write and flush `text`; a closed terminal (EIO, EPIPE) is not an error of ours.

    Once the terminal is gone (SIGHUP follows), the stream is pointed at /dev/null: the
    turn's cancellation, its postGeneration hooks and the exit must not fail on it.
    """
    try:
        stream.write(text)
        stream.flush()
    except OSError:
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)


class StderrView:
    """A view for `-p`: keeps the answer for stdout, puts everything else on stderr."""

    def __init__(self, *, verbose: bool = False) -> None:
        self.verbose = verbose

    def answer_text(self, delta: str) -> None:
        pass  # the final answer is printed alone once the turn is over

    def notice(self, text: str) -> None:
        notice_line(text)

    def tool_started(self, call: ToolCall) -> None:
        if self.verbose:
            notice_line(f"tool {call.name} {dict(call.arguments)}")

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        if self.verbose and result.is_error:
            notice_line(f"tool {call.name} failed: {result.content[:200]}")


class TerminalConsent:
    """Asks y/N on the terminal before a call that needs consent."""

    def __init__(self) -> None:
        self._session: PromptSession[str] = PromptSession()

    async def ask(self, request: ConsentRequest) -> bool:
        question = f"allow {request.describe()}? [y/N] "
        try:
            answer = await self._session.prompt_async(question)
        except (EOFError, KeyboardInterrupt):
            return False
        return answer.strip().lower() in ("y", "yes")
