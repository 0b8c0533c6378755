"""Test files of hook policy (`*.hooktest.yaml`): a list of cases, read strictly.

Each case names an event (preToolCall, postToolCall or preGeneration, either
spelling), what the agent would hand the hooks (a tool and its arguments, a result,
a prompt) and what the whole gate must answer (`expect`). A mistake names the file,
line and key, like the agent file's; `SCHEMA` is the same rules as a JSON Schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hookgate.hooks.events import canonical_event
from hookgate.hooks.files.yamlfile import Where, check_keys, describe, did_you_mean, expect_mapping
from hookgate.hooks.files.yamlfile import load_yaml as load_yaml_file
from hookgate.hooks.records import NamedTuple

#: The events a case may name: the ones whose hooks decide something.
CASE_EVENTS = ("preToolCall", "postToolCall", "preGeneration")
#: The answers a case may expect, per event.
DECISIONS: Mapping[str, tuple[str, ...]] = {
    "preToolCall": ("allow", "ask", "deny", "rewrite", "stop"),
    "postToolCall": ("allow", "ask", "deny", "rewrite", "replace", "stop"),
    "preGeneration": ("allow", "block", "rewrite", "context"),
}
CASE_KEYS = ("name", "event", "tool", "arguments", "result", "prompt", "expect")
EXPECT_KEYS = ("decision", "reason", "by", "input", "result", "prompt", "context")
#: Expected values read as regular expressions (searched, not matched whole).
PATTERN_KEYS = ("reason", "result", "prompt", "context")
_FIELDS_OF = {
    "preToolCall": ("tool", "arguments"),
    "postToolCall": ("tool", "arguments", "result"),
    "preGeneration": ("prompt",),
}


class Expect(NamedTuple):
    """What the gate must answer; None: not checked."""

    decision: str | None = None
    reason: str | None = None
    by: str | None = None
    input: Mapping[str, Any] | None = None
    result: str | None = None
    prompt: str | None = None
    context: str | None = None


class Case(NamedTuple):
    name: str
    event: str
    where: Where
    tool: str = ""
    arguments: Mapping[str, Any] = MappingProxyType({})
    result: str | None = None
    result_is_error: bool = False
    prompt: str = ""
    expect: Expect | None = None
    """None: the case has no `expect` yet (`--update` writes one)."""
    position: int = 0
    """The case's place in its file (0: the first)."""


def load_cases(path: Path) -> list[Case]:
    """The cases of the test file at `path`; `ConfigError` for any mistake in it."""
    document = load_yaml_file(path)
    where = Where(str(path))
    if not isinstance(document, list):
        raise where.error(
            f"a test file is a list of cases, got {describe(document)}",
            hint="- name: rm -rf is refused\n  event: preToolCall\n  tool: shell\n"
            '  arguments: {command: "rm -rf build"}\n  expect: {decision: deny}',
        )
    cases = [_case(item, where.item(document, index), index) for index, item in enumerate(document)]
    seen: dict[str, Where] = {}
    for case in cases:
        if case.name in seen:
            raise case.where.error(
                f"a second case named {case.name!r} (the first is at line {seen[case.name].line})",
                hint="each case needs a name of its own: the report and JUnit name cases by it",
            )
        seen[case.name] = case.where
    return cases


def _case(item: Any, where: Where, index: int) -> Case:
    node = expect_mapping(item, where, "a case")
    name = _string(node, where, "name", required=True)
    where = Where(where.file, f"{where.path} ({name})", where.line)
    check_keys(node, where, CASE_KEYS)
    event = _event(node, where)
    for key in CASE_KEYS[2:6]:
        if key in node and key not in _FIELDS_OF[event]:
            raise where.key(node, key).error(
                f"a {event} case has no {key!r}",
                hint=f"a {event} case takes: {', '.join(_FIELDS_OF[event])}",
            )
    result, is_error = _result(node, where, event)
    return Case(
        name=name,
        event=event,
        where=where,
        tool=_string(node, where, "tool", required=event != "preGeneration"),
        arguments=_mapping(node, where, "arguments"),
        result=result,
        result_is_error=is_error,
        prompt=_string(node, where, "prompt", required=event == "preGeneration"),
        expect=_expect(node, where, event) if "expect" in node else None,
        position=index,
    )


def _event(node: Mapping[Any, Any], where: Where) -> str:
    value = _string(node, where, "event", required=True)
    spec = canonical_event(value)
    if spec is None or spec.name not in CASE_EVENTS:
        hint = (
            did_you_mean(value, CASE_EVENTS) or f"events a case may name: {', '.join(CASE_EVENTS)}"
        )
        raise where.key(node, "event").error(f"unknown or untestable event {value!r}", hint=hint)
    return spec.name


def _result(node: Mapping[Any, Any], where: Where, event: str) -> tuple[str | None, bool]:
    if event != "postToolCall":
        return None, False
    if "result" not in node:
        raise where.error(
            "a postToolCall case needs the tool's 'result'",
            hint='result: "the output" or result: {content: "...", is_error: true}',
        )
    value = node["result"]
    if isinstance(value, str):
        return value, False
    at = where.key(node, "result")
    result = expect_mapping(value, at, "a result")
    check_keys(result, at, ("content", "is_error"))
    content = _string(result, at, "content", required=True)
    is_error = result.get("is_error", False)
    if not isinstance(is_error, bool):
        raise at.key(result, "is_error").error(f"expected true or false, got {describe(is_error)}")
    return content, is_error


def _expect(node: Mapping[Any, Any], where: Where, event: str) -> Expect:
    at = where.key(node, "expect")
    expect = expect_mapping(node["expect"], at, "the expected answer")
    check_keys(expect, at, EXPECT_KEYS)
    decision = _string(expect, at, "decision")
    if decision and decision not in DECISIONS[event]:
        hint = did_you_mean(decision, DECISIONS[event]) or (
            f"a {event} case expects one of: {', '.join(DECISIONS[event])}"
        )
        raise at.key(expect, "decision").error(f"{decision!r} is no {event} decision", hint=hint)
    for key in PATTERN_KEYS:
        if key in expect:
            _pattern(expect, at, key)
    if "input" in expect and event == "preGeneration":
        raise at.key(expect, "input").error(
            "a preGeneration case checks the rewritten question with 'prompt:'"
        )
    return Expect(
        decision=decision or None,
        reason=_string(expect, at, "reason") or None,
        by=_string(expect, at, "by") or None,
        input=_mapping(expect, at, "input") if "input" in expect else None,
        result=_string(expect, at, "result") if "result" in expect else None,
        prompt=_string(expect, at, "prompt") if "prompt" in expect else None,
        context=_string(expect, at, "context") if "context" in expect else None,
    )


def _pattern(node: Mapping[Any, Any], where: Where, key: str) -> None:
    value = _string(node, where, key)
    try:
        re.compile(value)
    except re.error as exc:
        raise where.key(node, key).error(
            f"{value!r} is not a regular expression: {exc}",
            hint="expected texts are regular expressions: escape . * ( [ with a backslash",
        ) from None


def _string(node: Mapping[Any, Any], where: Where, key: str, *, required: bool = False) -> str:
    if key not in node:
        if required:
            raise where.error(f"no {key!r}", hint=f"every case needs '{key}:'")
        return ""
    value = node[key]
    if not isinstance(value, str):
        raise where.key(node, key).error(f"expected a string, got {describe(value)}")
    return value


def _mapping(node: Mapping[Any, Any], where: Where, key: str) -> dict[str, Any]:
    if key not in node:
        return {}
    value = expect_mapping(node[key], where.key(node, key), f"the {key}")
    return _plain(value)  # type: ignore[no-any-return]


def _plain(value: Any) -> Any:
    """ruamel's round-trip values as plain JSON ones, as the model would send them."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)
