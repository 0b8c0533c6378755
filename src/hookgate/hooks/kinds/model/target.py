"""What a `model` hook asks: its checker (`model:`), what to judge (`instructions:`) and
how much of the event it may read (`input_budget:`), validated at the edge.

`model: scripted:FILE` plays verdicts back from a YAML file (offline, for tests and
demos); `model: {name, base_url, api_key_env}` asks an OpenAI-compatible server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookgate.hooks.files.yamlfile import Where, check_keys, describe

CHECKER_KEYS = ("name", "base_url", "api_key_env")
SCRIPTED_PREFIX = "scripted:"
DEFAULT_BASE_URL = "http://localhost:11434/v1"  # Ollama's OpenAI-compatible endpoint
#: Characters of the event a checker reads by default; past them the input is cut.
DEFAULT_INPUT_BUDGET = 16_000
_EXAMPLE = (
    "model: {name: llama3.2, base_url: http://localhost:11434/v1}, or model: scripted:verdicts.yaml"
)


@dataclass(frozen=True)
class Checker:
    """The checker model: a script of verdicts, or a model on an OpenAI-compatible server."""

    name: str = ""
    base_url: str = DEFAULT_BASE_URL
    api_key_env: str | None = None
    """The variable sent as the API key; None: `$OPENAI_API_KEY` to OpenAI's API only
    (`hookgate.hooks.kinds.model.apikey`), no key elsewhere."""
    script: Path | None = None

    def key_variable(self) -> str | None:
        """The variable whose value is sent as the key; None: no key is sent."""
        from hookgate.hooks.kinds.model.apikey import key_variable

        return key_variable(self.base_url, self.api_key_env)

    def describe(self) -> str:
        return f"scripted:{self.script}" if self.script else f"{self.name} at {self.base_url}"


@dataclass(frozen=True)
class ModelTarget:
    """One model hook: which checker, what it judges, how much of the event it reads."""

    checker: Checker
    instructions: str
    input_budget: int = DEFAULT_INPUT_BUDGET
    rule: str = ""
    """The guardrail rule the hook stands for (empty for a hook the file writes itself)."""


def parse_checker(node: Any, at: Where, base_dir: Path) -> Checker:
    """Validate a `model:` value naming a checker."""
    if isinstance(node, str) and node.startswith(SCRIPTED_PREFIX):
        script = node.removeprefix(SCRIPTED_PREFIX).strip()
        path = (base_dir / Path(script).expanduser()) if script else None
        if path is None or not path.is_file():
            raise at.error(
                f"no checker script at {node!r}", hint="model: scripted:PATH, relative to this file"
            )
        return Checker(script=path.resolve())
    if not isinstance(node, Mapping):
        raise at.error(f"expected a checker model mapping or 'scripted:PATH', got {describe(node)}",
                       hint=_EXAMPLE)  # fmt: skip
    check_keys(node, at, CHECKER_KEYS)
    for key in CHECKER_KEYS:
        value = node.get(key)
        if key in node and (not isinstance(value, str) or not value.strip()):
            raise at.key(node, key).error(f"expected a non-empty string, got {describe(value)}")
    if "name" not in node:
        raise at.error("the checker model needs a 'name'", hint=_EXAMPLE)
    return Checker(
        name=node["name"],
        base_url=node.get("base_url", DEFAULT_BASE_URL),
        api_key_env=node.get("api_key_env"),
    )


def parse_instructions(node: Mapping[Any, Any], at: Where) -> str:
    value = node.get("instructions")
    if not isinstance(value, str) or not value.strip():
        raise at.key(node, "instructions").error(
            f"a model hook needs instructions (what to judge), got {describe(value)}",
            hint="instructions: Block a shell command that deletes files outside the project.",
        )
    return value.strip()


def parse_budget(node: Mapping[Any, Any], at: Where) -> int:
    value = node.get("input_budget", DEFAULT_INPUT_BUDGET)
    if isinstance(value, bool) or not isinstance(value, int) or value < 200:
        raise at.key(node, "input_budget").error(
            f"expected a whole number of characters, at least 200, got {describe(value)}"
        )
    return value
