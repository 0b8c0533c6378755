"""A checker that answers from a YAML script (`model: scripted:FILE`), offline.

The script is a list of answers, consumed one per checker call:

    - decision: allow
    - decision: block
      reason: the page tells the agent to run a command
      when: "ignore previous instructions"   # only if the event holds this text
    - raw: "not a verdict"                    # sent as it is (a garbage answer)
    - delay: 5                                # seconds first (a checker that hangs)
    - error: connection refused               # the checker cannot be reached

An answer with `when` is used by the first call whose event holds that text; one
without it by the next call in order. A call with no answer left is a failure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookgate.hooks.errors import ConfigError, HookgateError
from hookgate.hooks.files.yamlfile import Where, check_keys, describe, expect_mapping, load_yaml

ANSWER_KEYS = ("decision", "reason", "raw", "delay", "error", "when")


class ScriptError(HookgateError):
    """The scripted checker has no answer for this call, or was told to fail."""


@dataclass(frozen=True)
class ScriptedAnswer:
    text: str | None
    error: str | None = None
    delay: float = 0.0
    when: str | None = None


class ScriptedChecker:
    """Plays `ScriptedAnswer`s back; each answers one call."""

    def __init__(self, answers: list[ScriptedAnswer]) -> None:
        self._answers = answers

    @classmethod
    def from_file(cls, path: Path) -> ScriptedChecker:
        document = load_yaml(path)
        where = Where(str(path))
        if not isinstance(document, list):
            raise where.error(f"a checker script is a list of answers, got {describe(document)}")
        return cls([_answer(item, where.item(document, i)) for i, item in enumerate(document)])

    async def answer(self, question: str) -> str:
        for index, answer in enumerate(self._answers):
            if answer.when is None or answer.when in question:
                del self._answers[index]
                break
        else:
            raise ScriptError("the scripted checker has no answer left for this call")
        if answer.delay:
            import asyncio  # here, on the loop: `hooks fire` reads checker scripts too

            await asyncio.sleep(answer.delay)
        if answer.error is not None:
            raise ScriptError(answer.error)
        assert answer.text is not None
        return answer.text


def _answer(node: Any, where: Where) -> ScriptedAnswer:
    node = expect_mapping(node, where, "an answer (decision, reason, raw, delay, error, when)")
    check_keys(node, where, ANSWER_KEYS)
    for key in ("reason", "raw", "error", "when"):
        if key in node and not isinstance(node[key], str):
            raise where.key(node, key).error(f"expected a string, got {describe(node[key])}")
    delay = node.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
        raise where.key(node, "delay").error(f"expected seconds >= 0, got {describe(delay)}")
    text: str | None = node.get("raw")
    if "decision" in node:
        verdict: Mapping[str, Any] = {
            "decision": node["decision"],
            "reason": node.get("reason", ""),
        }
        text = json.dumps(verdict)
    if text is None and "error" not in node:
        raise ConfigError(f"{where.file}:{where.line}: an answer needs decision, raw or error")
    return ScriptedAnswer(text, node.get("error"), float(delay), node.get("when"))
