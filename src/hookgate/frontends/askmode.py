"""`hookgate --ask NAME "question"`: one hand-off for scripts; the answer alone on stdout.

No session: the agent file gives the agents and the hooks (preAsk, postAsk,
subagentStart, subagentStop), which run as for the other two paths. stdout is
written once, after every hook has run. Exit codes: 0 answered; 1 the hand-off
failed, or no such agent (stdout empty unless a postAsk hook put an answer in its
place); 2 refused (by the depth limit or preAsk; stdout gets the hook's response, if
any); 130/143/129 a signal (SIGINT, SIGTERM, SIGHUP). A `hookgate --ask` started by an asked agent continues its depth count.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from hookgate.errors import ConfigError
from hookgate.frontends.terminal import notice_line, print_answer, write_text
from hookgate.handoff import DEPTH_ENV, DEPTH_LIMIT_ENV, HandoffOutcome, Refused, delegate
from hookgate.handoff.delegate import handoffs_for
from hookgate.hooks import HookEngine
from hookgate.hooks.files.yamlfile import did_you_mean
from hookgate.runtime.interrupts import Interrupts
from hookgate.security.trust.check import asked_digests, load_trusted
from hookgate.store.session import new_session_id

EXIT_ANSWERED, EXIT_FAILED, EXIT_REFUSED = 0, 1, 2


class StderrAskDisplay:
    """Notices on stderr; the streamed answer there too with `-v`, otherwise hidden."""

    def __init__(self, *, verbose: bool) -> None:
        self.verbose = verbose
        self._streamed = False

    @property
    def shows_answer(self) -> bool:
        return self.verbose

    def notice(self, text: str) -> None:
        self.asked_done("")
        notice_line(text)

    def asked_text(self, agent: str, delta: str) -> None:
        if self.verbose:
            self._streamed = True
            write_text(delta, sys.stderr)

    def asked_done(self, agent: str) -> None:
        if self._streamed:
            sys.stderr.write("\n")
            self._streamed = False


async def ask_mode(agent_file: Path, agent: str, question: str, *, verbose: bool = False) -> int:
    """Hand `question` to `agent` of `agent_file`; returns the exit status."""
    config, trusted = load_trusted(agent_file)
    display = StderrAskDisplay(verbose=verbose)
    depth = _env_count(DEPTH_ENV) or 0
    engine = HookEngine(
        config.hooks, session_id=new_session_id(), project_dir=str(Path.cwd()),
        asked_depth=depth, pinned=trusted.pins(),
    )  # fmt: skip
    handoffs = handoffs_for(
        config, engine, display, project_dir=Path.cwd(), depth=depth,
        inherited_limit=_env_count(DEPTH_LIMIT_ENV), trusted_digests=asked_digests(config.agents),
    )  # fmt: skip
    if handoffs is None:
        raise ConfigError(
            f"{config.path} lists no agents to ask",
            hint="add them under 'agents:', e.g. reviewer: {file: ../reviewer/hookgate.yaml}",
        )
    if agent not in handoffs.agents:
        raise ConfigError(
            f"{config.path} lists no agent named {agent!r}",
            hint=did_you_mean(agent, handoffs.agents) or "agents: " + ", ".join(handoffs.agents),
        )
    try:
        received = await _until_signalled(delegate(handoffs, agent, question))
    finally:
        await engine.aclose()
    if isinstance(received, int):
        return received
    return _print_outcome(received)


def _print_outcome(outcome: HandoffOutcome) -> int:
    if isinstance(outcome, Refused):
        notice_line(f"hand-off refused: {outcome.reason}")
        if outcome.response:
            print_answer(outcome.response)
        return EXIT_REFUSED
    for note in outcome.context:
        notice_line(f"note from a postAsk hook: {note}")
    if outcome.error is not None:
        notice_line(f"the hand-off to {outcome.agent} failed: {outcome.error}")
        if outcome.replaced:
            print_answer(outcome.answer)
        return EXIT_FAILED
    print_answer(outcome.answer)
    return EXIT_ANSWERED


async def _until_signalled(work: Coroutine[Any, Any, HandoffOutcome]) -> HandoffOutcome | int:
    """Run the hand-off; SIGINT, SIGTERM or SIGHUP cancels it, which stops the asked agent.

    A second signal must not cut subagentStop short: only the first cancels.
    """
    with Interrupts() as interrupts:
        received = await interrupts.run(work)
    if interrupts.exit_code is not None:
        notice_line("interrupted; the hand-off was cancelled")
        return interrupts.exit_code
    assert not isinstance(received, int)
    return received


def _env_count(name: str) -> int | None:
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() else None
