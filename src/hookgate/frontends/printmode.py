"""`hookgate -p "question"`: one turn, the answer alone on stdout.

Exit codes: 0 answered; 1 a model, tool-loop or config error; 2 the question was
blocked by a hook; 130 interrupted (SIGINT), 143 terminated (SIGTERM). Without a
terminal, calls that need consent are denied unless the agent file says `yolo: true`.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from hookgate.agent import AgentSession, open_agent
from hookgate.consent import AlwaysDeny, Consent
from hookgate.frontends.terminal import StderrView, TerminalConsent, notice_line
from hookgate.turn import Answered, PromptBlocked, TurnFailed, TurnOutcome, run_turn

EXIT_ANSWERED, EXIT_FAILED, EXIT_BLOCKED = 0, 1, 2
EXIT_SIGNAL_BASE = 128


async def print_mode(
    agent_file: Path, question: str, *, resume: str | None, continue_last: bool, verbose: bool
) -> int:
    consent: Consent = TerminalConsent() if sys.stdin.isatty() else AlwaysDeny()
    agent = await open_agent(
        agent_file, notify=notice_line, consent=consent, resume=resume, continue_last=continue_last
    )
    try:
        received = await _run_interruptible(agent, question, verbose)
    finally:
        await agent.aclose()
    if isinstance(received, int):
        return received
    if isinstance(received, Answered):
        print(received.text, flush=True)
        return EXIT_ANSWERED
    if isinstance(received, PromptBlocked):
        print(received.response, flush=True)
        return EXIT_BLOCKED
    assert isinstance(received, TurnFailed)
    return EXIT_FAILED


async def _run_interruptible(
    agent: AgentSession, question: str, verbose: bool
) -> TurnOutcome | int:
    """Run the turn; SIGINT or SIGTERM cancels it (postGeneration still runs)."""
    loop = asyncio.get_running_loop()
    caught: list[int] = []

    def interrupt(signum: int) -> None:
        caught.append(signum)
        if len(caught) == 1:  # a second signal must not cut postGeneration short
            turn.cancel()

    turn = asyncio.ensure_future(run_turn(agent, question, StderrView(verbose=verbose)))
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupt, signum)
    try:
        return await turn
    except asyncio.CancelledError:
        if not caught:
            raise
        notice_line("interrupted; the turn was cancelled")
        return EXIT_SIGNAL_BASE + caught[0]
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
