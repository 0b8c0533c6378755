"""Hand-offs to other agents: the `ask_agent` tool, `/ask-<name>` and `hookgate --ask`.

All three call `delegate`, where the asking agent's preAsk, postAsk, subagentStart
and subagentStop hooks run. The asked agent is a separate `hookgate` process with
its own file and hooks (`child`), speaking the stream of `protocol`
(`hookgate.frontends.asked` is its
side). See docs/handoffs.md.
"""

from hookgate.handoff.ask_tool import AskAgentTool
from hookgate.handoff.child import DEPTH_ENV, DEPTH_LIMIT_ENV, ChildAnswer
from hookgate.handoff.delegate import (
    AskDisplay,
    HandoffOutcome,
    Handoffs,
    NoticeDisplay,
    Refused,
    Returned,
    delegate,
    handoffs_for,
)

__all__ = [
    "DEPTH_ENV",
    "DEPTH_LIMIT_ENV",
    "AskAgentTool",
    "AskDisplay",
    "ChildAnswer",
    "HandoffOutcome",
    "Handoffs",
    "NoticeDisplay",
    "Refused",
    "Returned",
    "delegate",
    "handoffs_for",
]
