"""Consent: asking a human before a tool call that changes things runs.

`Consent` is the interface every front end implements: the line mode asks on the
terminal, ACP asks the editor, `-p` without a terminal denies. Hooks run before it:
a call a hook denies never reaches consent. The whole call is always shown, never cut,
and a shell call lists each command it runs; "always" allows that exact call again
for the rest of the session.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from enum import Enum
from typing import Any, Protocol

from hookgate.hooks.records import NamedTuple
from hookgate.security.policy import MAIN_ARGUMENT, SHELL_TOOLS, parse_command_line


class Answer(Enum):
    """What the user can answer; the values are ACP's permission option kinds."""

    ONCE = "allow_once"
    ALWAYS = "allow_always"
    """Allow this exact call (tool and arguments) again, without asking, this session."""
    DENY = "reject_once"


def call_line(tool: str, arguments: Mapping[str, Any]) -> str:
    """A call as every front end writes it: the tool, then its arguments as JSON
    (`shell {"command": "ls"}`), the form of the consent prompt, `-v` and `→` lines."""
    return f"{tool} {json.dumps(dict(arguments), ensure_ascii=False, default=str)}"


def hook_asks(hook: str, reason: str) -> str:
    """Which hook asks for consent, and why: `hook 'guard' asks: pushing needs a human`."""
    return f"hook {hook!r} asks" + (f": {reason}" if reason else " for consent")


class ConsentRequest(NamedTuple):
    tool: str
    arguments: Mapping[str, Any]
    """The arguments the tool will run with (after any hook's rewrite)."""
    rewritten: bool = False
    """Whether a hook changed the model's arguments."""
    reason: str = ""
    """Why the allow rules did not cover the call, where one could have
    ("this command builds part of itself at run time ($X)"); empty otherwise."""
    asked_by: str = ""
    """The hook that asks for consent (a `preToolCall` hook's `ask`), where one does."""
    asked_why: str = ""
    """That hook's reason, where it gave one."""

    def describe(self) -> str:
        """The whole call on one line: the tool and every argument, nothing cut."""
        note = " (arguments rewritten by a hook)" if self.rewritten else ""
        return f"{call_line(self.tool, self.arguments)}{note}"

    def details(self) -> str:
        """`describe()`, then for a shell call each command it runs, one a line, then why
        the allow rules did not cover it."""
        why = [f"  no allow rule covers it: {self.reason}"] if self.reason else []
        return "\n".join([self.describe(), *self._commands(), *why, *self._asker()])

    def _asker(self) -> list[str]:
        if not self.asked_by:
            return []
        return [f"  {hook_asks(self.asked_by, self.asked_why)}"]

    def key(self) -> str:
        """What makes two calls "this exact call"."""
        return json.dumps([self.tool, dict(self.arguments)], sort_keys=True, default=str)

    def _commands(self) -> list[str]:
        line = self.arguments.get(MAIN_ARGUMENT.get(self.tool, ""))
        if self.tool not in SHELL_TOOLS or not isinstance(line, str):
            return []
        parsed = parse_command_line(line)
        if parsed is None:
            return ["  it could not be split into commands: it runs as the shell reads it"]
        written = [command.written for command in parsed.commands]
        count = f"{len(written)} command" + ("" if len(written) == 1 else "s")
        return [f"  runs {count}:", *(f"    {n}. {text}" for n, text in enumerate(written, 1))]


class Consent(Protocol):
    async def ask(self, request: ConsentRequest) -> bool:
        """Whether the user allows this call."""
        ...


class SessionConsent:
    """A `Consent` that asks through `answer` and remembers "always" for the session."""

    __slots__ = ("_always", "answer")

    def __init__(self, answer: Callable[[ConsentRequest], Awaitable[Answer]]) -> None:
        self.answer = answer
        self._always: set[str] = set()

    def waits(self, request: ConsentRequest) -> bool:
        """Whether `ask(request)` waits for the person: not a call allowed "always"."""
        return request.key() not in self._always

    async def ask(self, request: ConsentRequest) -> bool:
        key = request.key()
        if key in self._always:
            return True
        answer = await self.answer(request)
        if answer is Answer.ALWAYS:
            self._always.add(key)
        return answer is not Answer.DENY


def waits_for_user(consent: Consent, request: ConsentRequest) -> bool:
    """Whether `consent` would wait for a person on `request`: one that says so through
    a `waits(request)` method (a front end's prompt), never one that answers by itself
    (yolo, print mode without a terminal)."""
    waits = getattr(consent, "waits", None)
    return bool(waits(request)) if callable(waits) else False


class AlwaysAllow:
    """`yolo: true`: no questions. Hooks and deny rules still apply."""

    async def ask(self, request: ConsentRequest) -> bool:
        return True


class AlwaysDeny:
    """No one to ask (print mode without a terminal): calls that need consent are denied."""

    async def ask(self, request: ConsentRequest) -> bool:
        return False
