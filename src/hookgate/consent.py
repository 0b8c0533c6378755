"""Consent: asking a human before a tool call that changes things runs.

`Consent` is the interface every front end implements: the line mode asks on the
terminal, ACP asks the editor, `-p` without a terminal denies. Hooks run before it:
a call a hook denies never reaches consent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class ConsentRequest:
    tool: str
    arguments: Mapping[str, Any]
    """The arguments the tool will run with (after any hook's rewrite)."""
    rewritten: bool = False
    """Whether a hook changed the model's arguments."""

    def describe(self) -> str:
        args = json.dumps(dict(self.arguments), ensure_ascii=False)
        if len(args) > 400:
            args = args[:399] + "…"
        note = " (arguments rewritten by a hook)" if self.rewritten else ""
        return f"{self.tool} {args}{note}"


class Consent(Protocol):
    async def ask(self, request: ConsentRequest) -> bool:
        """Whether the user allows this call."""
        ...


class AlwaysAllow:
    """`yolo: true`: no questions. Hooks and deny rules still apply."""

    async def ask(self, request: ConsentRequest) -> bool:
        return True


class AlwaysDeny:
    """No one to ask (print mode without a terminal): calls that need consent are denied."""

    async def ask(self, request: ConsentRequest) -> bool:
        return False
