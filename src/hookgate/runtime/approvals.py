"""Approve once: a tool call a guardrail blocked may pass that guardrail once, unchanged.

A block gets a 64-bit id (from the call's tool and arguments; never one that another
call holds). Line mode approves it with `/approve <id>`, and the next identical call
skips that guardrail, once; ACP asks
the editor at the block itself (`ask`); `-p` has no way around it. Every other hook
and rule still applies to the approved call. Each approval is recorded as an event.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping
from enum import StrEnum
from typing import Any

from hookgate.hooks import HookEngine, HookSpec
from hookgate.hooks.files.digest import sha256
from hookgate.hooks.records import NamedTuple
from hookgate.runtime.consent import ConsentRequest

#: Hex digits of a block's id: 64 bits, so no call can be crafted to share the id of
#: another (24 bits fell to a search of 2 s), still short enough to copy.
ID_DIGITS = 16


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

    __slots__ = ("_approved", "_blocks", "_id_digits", "ask", "mode", "record")

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
        *,
        id_digits: int = ID_DIGITS,
    ) -> None:
        self.mode = mode
        self.ask = ask
        self.record = record
        self._blocks = {}
        self._approved = {}
        self._id_digits = id_digits

    def blocked(
        self, tool: str, arguments: Mapping[str, Any], hook: HookSpec, reason: str
    ) -> GuardrailBlock:
        """Record a block under the id of its call, or of the same call blocked before.

        An id held by another call is never taken over: this call gets the next free one,
        so approving an id lets through only the call it was shown with.
        """
        key = _key(tool, arguments)
        rule = hook.model.rule if hook.model is not None else hook.name
        block_id = self._free_id(key)
        block = GuardrailBlock(block_id, tool, dict(arguments), rule, hook.name, reason)
        self._blocks.setdefault(block_id, block)
        return block

    def _free_id(self, key: str) -> str:
        """The id of the call `key`: its digest's, or a salted one where another holds it."""
        for attempt in itertools.count():
            salted = key if attempt == 0 else f"{attempt}\0{key}"
            block_id = sha256(salted.encode()).hexdigest()[: self._id_digits]
            held = self._blocks.get(block_id)
            if held is None or _key(held.tool, held.arguments) == key:
                return block_id
        raise AssertionError("unreachable: itertools.count() never ends")

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
