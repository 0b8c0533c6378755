"""Approve once: a tool call a guardrail blocked may pass that guardrail once, unchanged.

A block gets a short id (from the call's tool and arguments). Line mode approves it
with `/approve <id>`, and the next identical call skips that guardrail, once; ACP asks
the editor at the block itself (`ask`); `-p` has no way around it. Every other hook
and rule still applies to the approved call. Each approval is recorded as an event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from enum import StrEnum
from typing import Any, NamedTuple

from hookgate.consent import ConsentRequest
from hookgate.hooks import HookEngine, HookSpec
from hookgate.hooks.digest import sha256

#: Hex digits of a block's id: enough to tell a session's blocks apart, short to type.
ID_DIGITS = 6


class ApproveMode(StrEnum):
    NONE = "none"
    """No one can approve (`-p`): the block stands."""
    COMMAND = "command"
    """The user approves later by id (line mode's `/approve <id>`)."""
    ASK = "ask"
    """The front end asks at once (ACP's permission request)."""


class GuardrailBlock(NamedTuple):
    """One call a guardrail blocked."""

    id: str
    tool: str
    arguments: Mapping[str, Any]
    rule: str
    hook: str
    reason: str


class Approvals:
    """A session's guardrail blocks and the approvals not used yet."""

    __slots__ = ("_approved", "_blocks", "ask", "mode", "record")

    mode: ApproveMode
    ask: Callable[[GuardrailBlock], Awaitable[bool]] | None
    """ACP: asks whether to let this call through once (`mode` ASK)."""
    record: Callable[[str, Mapping[str, Any]], None]
    """Writes an event into the session's history."""
    _blocks: dict[str, GuardrailBlock]
    _approved: dict[str, str]
    """Call key → the name of the guardrail the next identical call skips."""

    def __init__(
        self,
        mode: ApproveMode = ApproveMode.NONE,
        ask: Callable[[GuardrailBlock], Awaitable[bool]] | None = None,
        record: Callable[[str, Mapping[str, Any]], None] = lambda kind, data: None,
    ) -> None:
        self.mode = mode
        self.ask = ask
        self.record = record
        self._blocks = {}
        self._approved = {}

    def blocked(
        self, tool: str, arguments: Mapping[str, Any], hook: HookSpec, reason: str
    ) -> GuardrailBlock:
        key = _key(tool, arguments)
        short = sha256(key.encode()).hexdigest()[:ID_DIGITS]
        rule = hook.model.rule if hook.model is not None else hook.name
        block = GuardrailBlock(short, tool, dict(arguments), rule, hook.name, reason)
        self._blocks[short] = block
        return block

    def approve(self, block_id: str, how: str, *, now: bool = False) -> GuardrailBlock | None:
        """Let the next call identical to block `block_id` past its guardrail, once
        (`now`: the blocked call itself, asked about at once, is that call)."""
        block = self._blocks.pop(block_id.strip(), None)
        if block is None:
            return None
        if not now:
            self._approved[_key(block.tool, block.arguments)] = block.hook
        self.record("guardrail_approved", {"id": block.id, "tool": block.tool,
                                           "arguments": dict(block.arguments), "rule": block.rule,
                                           "reason": block.reason, "via": how})  # fmt: skip
        return block

    def take(
        self, engine: HookEngine, tool: str, arguments: Mapping[str, Any]
    ) -> tuple[HookSpec, ...]:
        """The guardrail an approval lets this call skip (used up now), or none."""
        name = self._approved.pop(_key(tool, arguments), None)
        if name is None:
            return ()
        return tuple(h for h in engine.hooks_for("preToolCall") if h.name == name)

    def pending(self) -> list[GuardrailBlock]:
        return list(self._blocks.values())


def blocking_guardrail(engine: HookEngine, event: str, name: str | None) -> HookSpec | None:
    """The guardrail hook named `name` among `event`'s hooks, if that is what it is."""
    from hookgate.hooks.guardrails import is_guardrail  # a blocked call alone asks

    return next((h for h in engine.hooks_for(event) if h.name == name and is_guardrail(h)), None)


def _key(tool: str, arguments: Mapping[str, Any]) -> str:
    return ConsentRequest(tool, arguments).key()
