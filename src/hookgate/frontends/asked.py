"""The asked agent's side of a hand-off: `hookgate --answer-asked` (internal).

One turn on the prompt read from stdin, with the agent's own file and hooks at the
depth it was given; the hand-off stream on stdout. Nothing else may reach that
stream, so the real stdout is kept aside and fd 1 is pointed at stderr before
anything runs. SIGTERM (the asker's timeout or cancellation) cancels the turn, which
stops this agent's own tools and hooks; postGeneration still runs. So does the death
of the asker, which the kernel turns into a SIGTERM (Linux). There is no one to ask
for consent: calls that need it are denied unless the file says `yolo: true`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path
from typing import BinaryIO

from hookgate.errors import HookgateError
from hookgate.handoff.protocol import (
    EXIT_ANSWERED,
    EXIT_BLOCKED,
    EXIT_FAILED,
    Final,
    StreamWriter,
)
from hookgate.hooks import loop
from hookgate.messages import ToolCall
from hookgate.runtime.agent import open_agent
from hookgate.runtime.consent import AlwaysDeny
from hookgate.runtime.interrupts import Interrupts
from hookgate.runtime.turn import Answered, PromptBlocked, TurnFailed, TurnOutcome, run_turn
from hookgate.tools import ToolResult
from hookgate.view import NoticeKind

#: Characters of a tool call's arguments shown in its notice.
ARGUMENTS_EXCERPT = 120
#: prctl(2) option: the signal this process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


class StreamView:
    """The turn's view in an asked agent: its text and notices go down the stream."""

    def __init__(self, writer: StreamWriter) -> None:
        self.writer = writer

    def answer_text(self, delta: str) -> None:
        self.writer.text(delta)

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        self.writer.notice(text)

    def tool_started(self, call: ToolCall) -> None:
        arguments = " ".join(str(dict(call.arguments)).split())
        if len(arguments) > ARGUMENTS_EXCERPT:
            arguments = arguments[: ARGUMENTS_EXCERPT - 1] + "…"
        self.writer.notice(f"→ {call.name} {arguments}")

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        pass

    # Hand-offs this agent makes in turn: their notices only; their text is not ours.

    shows_answer = False

    def asked_text(self, agent: str, delta: str) -> None:
        pass

    def asked_done(self, agent: str) -> None:
        pass


def take_stdout() -> BinaryIO:
    """The real stdout, for the stream alone; fd 1 and `sys.stdout` now go to stderr."""
    stream = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


async def answer_asked(
    agent_file: Path,
    prompt: str,
    stream: BinaryIO,
    *,
    depth: int,
    depth_limit: int | None,
    trusted_digest: str | None = None,
    asked_as: str | None = None,
    resume: str | None = None,
    caller_deny: tuple[str, ...] = (),
) -> int:
    """Run one turn of `agent_file` on `prompt`, writing the hand-off stream to `stream`.

    `asked_as` is the name the asker knows this agent by; its hooks read it. `resume`:
    an earlier answer's session, which `prompt` goes on (the asker's hook sent it on).
    `caller_deny`: the asker's deny rules, which this agent runs under as well.
    """
    writer = StreamWriter(stream)
    view = StreamView(writer)
    with Interrupts() as interrupts:  # SIGTERM: the asker's timeout or cancellation
        try:
            agent = await interrupts.run(
                open_agent(
                    agent_file, notify=writer.notice, consent=AlwaysDeny(), asked_depth=depth,
                    ask_depth_limit=depth_limit, ask_display=view, trusted_digest=trusted_digest,
                    asked_as=asked_as, resume=resume, caller_deny=caller_deny,
                )
            )  # fmt: skip
        except HookgateError as exc:  # its file is wrong, or its sessionStart said no
            writer.final(Final("failed", str(exc)))
            return EXIT_FAILED
        if isinstance(agent, int):
            writer.final(Final("failed", "the asked agent was stopped"))
            return agent
        try:
            outcome = await interrupts.run(run_turn(agent, prompt, view))
        finally:
            await agent.aclose()
    if isinstance(outcome, int):
        writer.final(Final("failed", "the asked agent was stopped"))
        return outcome
    return _report(writer, outcome, agent.session_id if agent.history.saved else None)


def _report(writer: StreamWriter, outcome: TurnOutcome, session: str | None) -> int:
    if isinstance(outcome, Answered):
        writer.final(Final("answer", outcome.text, session=session))
        return EXIT_ANSWERED
    if isinstance(outcome, PromptBlocked):
        writer.final(Final("blocked", outcome.response, outcome.reason))
        return EXIT_BLOCKED
    message = outcome.message if isinstance(outcome, TurnFailed) else "the turn was cancelled"
    writer.final(Final("failed", message))
    return EXIT_FAILED


def answer_asked_main(
    agent_file: Path,
    *,
    depth: int,
    depth_limit: int | None,
    trusted_digest: str | None = None,
    asked_as: str | None = None,
    resume: str | None = None,
    caller_deny: tuple[str, ...] = (),
) -> int:
    """The CLI's `--answer-asked`: the prompt from stdin, the stream on the real stdout."""
    stop_with_asker()
    stream = take_stdout()
    prompt = sys.stdin.buffer.read().decode("utf-8", "replace")
    with stream:
        # An event loop only once the turn must wait: every hand-off starts one of us.
        return loop.run(
            answer_asked(
                agent_file, prompt, stream, depth=depth, depth_limit=depth_limit,
                trusted_digest=trusted_digest, asked_as=asked_as, resume=resume,
                caller_deny=caller_deny,
            )
        )  # fmt: skip


def stop_with_asker() -> None:
    """Ask the kernel for a SIGTERM when the asker dies: no asked agent outlives it.

    The asker stops its child itself on a timeout or a cancellation; this covers the
    asker being killed outright. Without prctl (not Linux) the asked agent runs on
    until its turn ends.
    """
    asker = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != asker:  # it died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)
