"""The keys of a hook entry that belong to its kind: a process's `args`, `env` and
`persistent`, an `http:` target, a `python:` function, a `model:` checker.

`config.parse_hook` calls these once it knows the kind; each kind's own module (its
target's shape) is imported by the first hook of that kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks.events import EventSpec
from hookgate.hooks.files.yamlfile import Where, describe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hookgate.hooks.kinds.http.target import HttpTarget
    from hookgate.hooks.kinds.model.target import ModelTarget
    from hookgate.hooks.kinds.python import HookCallable

#: Keys that only mean something to a model hook.
_MODEL_ONLY = ("instructions", "input_budget")
#: Keys that only mean something to a process the hook starts.
_PROCESS_ONLY = ("shell", "env", "cwd", "persistent")


def check_kind_keys(node: Mapping[Any, Any], where: Where, kind: str) -> None:
    """Refuse keys that mean nothing to a hook of `kind`."""
    if kind in ("http", "model") and (stray := [key for key in _PROCESS_ONLY if key in node]):
        raise where.key(node, stray[0]).error(
            f"{stray[0]!r} applies to a process the hook starts; {'an' if kind == 'http' else 'a'} "
            f"{kind} hook starts none",
            hint="remove it" + (" (headers go under http.headers)" if kind == "http" else ""),
        )
    if kind != "model" and (stray := [key for key in _MODEL_ONLY if key in node]):
        raise where.key(node, stray[0]).error(
            f"{stray[0]!r} applies to a model hook only", hint="remove it, or use model: ..."
        )


def http_target(node: Mapping[Any, Any], where: Where) -> HttpTarget:
    from hookgate.hooks.kinds.http.target import parse_http_target

    return parse_http_target(node["http"], where.key(node, "http"))


def python_hook_of(
    node: Mapping[Any, Any], where: Where, base_dir: Path, import_python: bool
) -> HookCallable:
    from hookgate.hooks.kinds.python import python_hook

    return python_hook(node, where, base_dir, import_python)


def model_target(
    node: Mapping[Any, Any], where: Where, event: EventSpec, base_dir: Path
) -> ModelTarget:
    from hookgate.hooks.kinds.model.target import parse_budget, parse_checker, parse_instructions

    if not event.can_block and event.name != "postToolCall":
        raise where.key(node, "model").error(
            f"a model hook judges events that can block, and {event.name!r} cannot",
            hint="use it on preToolCall, postToolCall (a block withholds the result), "
            "preGeneration, preAsk or sessionStart",
        )
    if "format" in node and node["format"] != "native":
        raise where.key(node, "format").error("a model hook has no reply format to choose",
                                              hint="remove format")  # fmt: skip
    from hookgate.hooks.kinds.model.target import ModelTarget

    return ModelTarget(
        checker=parse_checker(node["model"], where.key(node, "model"), base_dir),
        instructions=parse_instructions(node, where),
        input_budget=parse_budget(node, where),
    )


def args_of(node: Mapping[Any, Any], where: Where) -> tuple[str, ...]:
    value = node["args"]
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(a, str) and "\x00" not in a for a in value)
    ):
        raise where.key(node, "args").error(
            f"expected a non-empty list of strings, got {describe(value)}",
            hint="args: [./guard.py, --strict]",
        )
    return tuple(value)


def env_of(node: Mapping[Any, Any], where: Where) -> dict[str, str]:
    value = node.get("env", {})
    at = where.key(node, "env")
    if not isinstance(value, Mapping):
        raise at.error(f"expected a mapping of names to strings, got {describe(value)}")
    env: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key or "=" in key or "\x00" in key:
            raise at.key(value, key).error(f"invalid variable name {key!r}")
        if isinstance(item, bool) or not isinstance(item, str | int | float) or "\x00" in str(item):
            raise at.key(value, key).error(f"expected a string value, got {describe(item)}")
        env[key] = str(item)
    return env


def persistent_of(node: Mapping[Any, Any], where: Where, kind: str) -> bool:
    value = node.get("persistent", False)
    if not isinstance(value, bool):
        raise where.key(node, "persistent").error(
            f"expected true or false, got {describe(value)}", hint="persistent: true"
        )
    if value and kind == "python":
        raise where.key(node, "persistent").error(
            "a python hook already stays loaded: persistent applies to command and args hooks",
            hint="remove it",
        )
    return value
