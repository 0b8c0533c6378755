"""`hookgate -p "question"`: one turn, the answer alone on stdout.

Exit codes: 0 answered; 1 a model, tool-loop or config error; 2 the question was
blocked by a hook; 130 interrupted (SIGINT), 143 terminated (SIGTERM). Without a
terminal, calls that need consent are denied unless the agent file says `yolo: true`.
The answer is written byte for byte to a pipe, and with control characters made
visible to a terminal.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hookgate.frontends.terminal import (
    StderrView,
    TerminalConsent,
    TerminalTeamDisplay,
    notice_line,
    print_answer,
)
from hookgate.runtime.agent import open_agent
from hookgate.runtime.consent import AlwaysDeny, Consent
from hookgate.runtime.interrupts import Interrupts
from hookgate.runtime.turn import Answered, PromptBlocked, TurnFailed, run_turn

EXIT_ANSWERED, EXIT_FAILED, EXIT_BLOCKED = 0, 1, 2


async def print_mode(
    agent_file: Path, question: str, *, resume: str | None, continue_last: bool, verbose: bool
) -> int:
    consent: Consent = TerminalConsent() if sys.stdin.isatty() else AlwaysDeny()
    with Interrupts() as interrupts:
        agent = await interrupts.run(
            open_agent(agent_file, notify=notice_line, consent=consent, resume=resume,
                       continue_last=continue_last, team_display=TerminalTeamDisplay())
        )  # fmt: skip
        if isinstance(agent, int):
            notice_line("interrupted before the turn started")
            return agent
        try:
            received = await interrupts.run(run_turn(agent, question, StderrView(verbose=verbose)))
        finally:
            await agent.aclose()  # a signal now is only remembered: the servers must stop
    if isinstance(received, int):
        notice_line("interrupted; the turn was cancelled")
        return received
    if interrupts.exit_code is not None:  # too late to cancel: the turn was over, or closing
        notice_line("interrupted; the answer is not printed")
        return interrupts.exit_code
    if isinstance(received, Answered):
        print_answer(received.text)
        return EXIT_ANSWERED
    if isinstance(received, PromptBlocked):
        print_answer(received.response)
        return EXIT_BLOCKED
    assert isinstance(received, TurnFailed)
    return EXIT_FAILED
