"""`delegate`: the one function every hand-off goes through, and where its hooks run.

    ask_agent tool ─┐
    /ask-<name>    ─┼─▶ delegate ─▶ depth limit ─▶ preAsk ─▶ subagentStart
    hookgate --ask ─┘        ─▶ the asked agent (a child process) ─▶ subagentStop ─▶ postAsk

preAsk sees the question and the conversation before they are joined into the
prompt, and may rewrite either or refuse; it cannot change the agent. postAsk sees
the whole answer and the error before any caller truncates or keeps the answer; it
may replace the answer (announced on the notice line) or add context. The answer
streams to the user while it is written: postAsk changes what the asker reads, not
what was shown.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from hookgate.config.agentfile import DEFAULT_MAX_ASK_DEPTH, AgentConfig, AgentRef
from hookgate.handoff.child import ChildAnswer, run_child
from hookgate.hooks import MAX_CONTINUES, HookEngine, Outcome
from hookgate.hooks.wording import BLOCKED_MARKER


class AskDisplay(Protocol):
    """Where a hand-off shows itself: each front end has one."""

    @property
    def shows_answer(self) -> bool:
        """Whether `asked_text` reaches the user (a notice about the answer says so)."""
        ...

    def notice(self, text: str) -> None:
        """A line for the user, never part of an answer."""
        ...

    def asked_text(self, agent: str, delta: str) -> None:
        """A piece of the asked agent's answer, as it is written."""
        ...

    def asked_done(self, agent: str) -> None:
        """The asked agent's stream is over (a front end ends its line)."""
        ...


class NoticeDisplay:
    """A display for front ends that show notices only: the streamed answer is dropped."""

    shows_answer = False

    def __init__(self, notify: Callable[[str], None]) -> None:
        self._notify = notify

    def notice(self, text: str) -> None:
        self._notify(text)

    def asked_text(self, agent: str, delta: str) -> None:
        pass

    def asked_done(self, agent: str) -> None:
        pass


@dataclass(frozen=True)
class Refused:
    """The hand-off did not happen: unknown agent, too deep, a preAsk hook said no, or a
    hook of the asked agent stopped the question before its model read it."""

    agent: str
    reason: str
    response: str | None = None
    """The refusing hook's message, if it gave one."""


@dataclass(frozen=True)
class Returned:
    """The asked agent ran; its answer as postAsk left it, and what went wrong."""

    agent: str
    question: str
    """The question as sent (after preAsk)."""
    answer: str
    error: str | None
    context: tuple[str, ...] = ()
    """What postAsk hooks added for the asking agent."""
    replaced: bool = False
    """Whether a postAsk hook replaced the answer (the user saw the original)."""


HandoffOutcome = Refused | Returned


@dataclass(frozen=True)
class Handoffs:
    """The agents one asking agent may hand questions to, and what a hand-off needs."""

    agents: Mapping[str, AgentRef]
    engine: HookEngine
    """The asking agent's hooks: preAsk, postAsk, subagentStart and subagentStop."""
    display: AskDisplay
    project_dir: Path
    env: Mapping[str, str]
    """The environment the asked agents start with."""
    depth: int = 0
    """How deep the asking agent itself runs (0: nobody asked it)."""
    depth_limit: int = DEFAULT_MAX_ASK_DEPTH
    trusted_digests: Mapping[str, str] = field(default_factory=dict)
    """Each asked agent's trust entry digest as of the session start, by name: the
    child runs only that closure (its file is read once per session, in effect)."""
    deny: tuple[str, ...] = ()
    """The deny rules every asked agent runs under besides its own: the asker's own
    and those the asker runs under."""

    def refusal(self, agent: str) -> Refused | None:
        """Why asking `agent` is refused before any hook runs, or None."""
        if agent not in self.agents:
            known = ", ".join(self.agents) or "none"
            return Refused(agent, f"no agent named {agent!r} (agents: {known})")
        if self.depth + 1 > self.depth_limit:
            return Refused(
                agent,
                f"asking {agent!r} would run an agent {self.depth + 1} hand-offs deep; "
                f"the limit is {self.depth_limit} (max_ask_depth)",
            )
        return None


def handoffs_for(
    config: AgentConfig,
    engine: HookEngine,
    display: AskDisplay,
    *,
    project_dir: Path,
    depth: int,
    inherited_limit: int | None,
    trusted_digests: Mapping[str, str] | None = None,
    agents: Mapping[str, AgentRef] | None = None,
    inherited_deny: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Handoffs | None:
    """The hand-offs of an agent whose file lists `agents:` (or to `agents`, a team's
    members), or None when there are none.

    The depth limit only tightens down a chain: an asked agent keeps the lower of its
    own `max_ask_depth` and the one it was started with. Deny rules only add up: an
    asked agent runs under its asker's (`config`'s and `inherited_deny`) and its own.
    `env`: set over hookgate's own environment for the asked agents (the sandbox they
    stay within).
    """
    agents = config.agents if agents is None else agents
    if not agents:
        return None
    limit = config.max_ask_depth
    if inherited_limit is not None:
        limit = min(limit, inherited_limit)
    return Handoffs(
        agents, engine, display, project_dir, {**os.environ, **(env or {})}, depth, limit,
        dict(trusted_digests or {}),
        tuple(dict.fromkeys((*config.permissions.deny, *inherited_deny))),
    )  # fmt: skip


async def delegate(
    handoffs: Handoffs,
    agent: str,
    question: str,
    conversation: Sequence[Mapping[str, str]] = (),
) -> HandoffOutcome:
    """Hand `question` (and `conversation`, oldest first) to `agent`, hooks around it.

    Never raises for a refusal or a failure of the asked agent: those are outcomes.
    Cancellation stops the asked agent's process group, runs subagentStop, and
    propagates.
    """
    refused = handoffs.refusal(agent)
    if refused is not None:
        return refused
    engine, display = handoffs.engine, handoffs.display
    pre = await engine.run(
        "preAsk",
        {"agent": agent, "question": question, "conversation": [dict(m) for m in conversation]},
    )
    _show(pre, display)
    if pre.blocked:
        return Refused(agent, pre.reason or f"blocked by hook {pre.blocked_by!r}", pre.response)
    question = pre.payload["question"]
    prompt = join_prompt(question, pre.payload["conversation"])
    answer = await _run_asked(handoffs, handoffs.agents[agent], prompt)
    if answer.blocked:  # refused by the asked agent's own hooks, as by a preAsk
        assert answer.error is not None
        shown = BLOCKED_MARKER.format(reason=answer.error)
        post = await engine.run(
            "postAsk",
            {"agent": agent, "question": shown, "answer": answer.text, "error": answer.error},
        )
        _show(post, display)
        return Refused(agent, answer.error, answer.text or None)
    post = await engine.run(
        "postAsk",
        {"agent": agent, "question": question, "answer": answer.text, "error": answer.error},
    )
    _show(post, display)
    replaced = "answer" in post.changed
    if replaced:
        display.notice(f"the answer of {agent} was replaced by a hook: " + (
            "the asking agent reads another answer than the one shown" if display.shows_answer
            else "the agent's own answer was not shown"
        ))  # fmt: skip
    return Returned(agent, question, post.payload["answer"], answer.error, post.context, replaced)


async def _run_asked(handoffs: Handoffs, ref: AgentRef, prompt: str) -> ChildAnswer:
    """Run the asked agent between subagentStart and subagentStop.

    A subagentStop hook may send it on (Claude's SubagentStop `decision: block`): its
    session resumes in a new child with the hook's reason as the next question, at most
    `MAX_CONTINUES` times in a row, as the end of a turn is.
    """
    engine, display = handoffs.engine, handoffs.display
    _show(await engine.run("subagentStart", {"agent": ref.name}), display)
    answer, stop = await _run_once(handoffs, ref, prompt, resume=None)
    for _ in range(MAX_CONTINUES):
        if stop.continue_with is None:
            break
        if answer.error is not None or answer.session is None:
            why = answer.error or "its session was not saved"
            display.notice(f"{ref.name} cannot be sent on as a hook asked: {why}")
            break
        display.notice(f"a hook sent {ref.name} on: {stop.continue_with}")
        answer, stop = await _run_once(handoffs, ref, stop.continue_with, resume=answer.session)
    return answer


async def _run_once(
    handoffs: Handoffs, ref: AgentRef, prompt: str, *, resume: str | None
) -> tuple[ChildAnswer, Outcome]:
    """One run of the asked agent, then its subagentStop hooks (after a cancellation too)."""
    engine, display = handoffs.engine, handoffs.display
    answer = ChildAnswer("", "the hand-off was cancelled")
    try:
        answer = await run_child(
            ref, prompt, depth=handoffs.depth + 1, depth_limit=handoffs.depth_limit,
            cwd=handoffs.project_dir, env=handoffs.env,
            trusted_digest=handoffs.trusted_digests.get(ref.name), resume=resume,
            deny=handoffs.deny,
            on_text=lambda delta: display.asked_text(ref.name, delta),
            on_notice=lambda text: display.notice(f"{ref.name}: {text}"),
        )  # fmt: skip
    finally:
        display.asked_done(ref.name)
        # Also after a cancellation, like postGeneration: an audit keeps every hand-off.
        stop = await engine.run(
            "subagentStop",
            {"agent": ref.name, "answer": answer.text, "error": answer.error,
             "continued": resume is not None},
        )  # fmt: skip
        _show(stop, display)
    return answer, stop


def join_prompt(question: str, conversation: Sequence[Mapping[str, str]]) -> str:
    """The prompt the asked agent receives: the conversation (if any), then the question."""
    if not conversation:
        return question
    turns = "\n\n".join(f"{m['role']}: {m['content']}" for m in conversation)
    return (
        "The conversation so far, for context:\n<conversation>\n"
        f"{turns}\n</conversation>\n\n{question}"
    )


def _show(outcome: Outcome, display: AskDisplay) -> None:
    for notice in outcome.notices:
        display.notice(notice)
