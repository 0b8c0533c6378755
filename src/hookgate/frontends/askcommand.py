"""`/ask-<name> question`: a hand-off the user starts, kept in the asking agent's history.

It goes through `delegate` like the `ask_agent` tool, so the same hooks run. The
history keeps the question as sent and the answer as postAsk left it, truncated as a
tool output would be; a refused hand-off leaves nothing there, since the question
may hold what the preAsk hook stopped.
"""

from __future__ import annotations

from hookgate.handoff.ask_tool import tool_result
from hookgate.handoff.delegate import HandoffOutcome, Handoffs, Refused, delegate
from hookgate.messages import Message
from hookgate.runtime.history import History

COMMAND_PREFIX = "/ask-"
#: What the asking agent answers to a recorded `/ask`: chat templates want turns to
#: alternate, and the model did not write the exchange itself.
ACKNOWLEDGED = "Noted."


def parse_ask_command(text: str) -> tuple[str, str] | None:
    """(agent, question) from `/ask-<agent> question`, or None for another line."""
    if not text.startswith(COMMAND_PREFIX):
        return None
    name, _, question = text.removeprefix(COMMAND_PREFIX).partition(" ")
    return name, question.strip()


async def ask_from_user(
    handoffs: Handoffs, history: History, agent: str, question: str
) -> HandoffOutcome:
    """Hand `question` to `agent`, then keep the exchange in `history` unless refused."""
    outcome = await delegate(handoffs, agent, question)
    if isinstance(outcome, Refused):
        return outcome
    record = f"[the user asked the agent {agent} directly ({COMMAND_PREFIX}{agent})]"
    answer = tool_result(outcome).content
    history.append(Message("user", f"{record}\n{outcome.question}\n\n[its answer]\n{answer}"))
    history.append(Message("assistant", ACKNOWLEDGED))
    return outcome
