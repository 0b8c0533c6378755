"""One case through the gate, and how its answer compares with what the case expects.

`run_case` asks a `PolicyGate`; `mismatches` names each expected key the answer
misses; `diff_lines` shows them as `- expected` / `+ actual` lines, then who decided.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from hookgate.hooks.records import NamedTuple
from hookgate.policytest.cases import Case, Expect
from hookgate.policytest.gate import PolicyGate, Verdict
from hookgate.tools import ToolResult


class CaseResult(NamedTuple):
    case: Case
    verdict: Verdict
    failed: tuple[str, ...]
    """The expected keys the answer misses (`expect` itself when the case has none)."""

    @property
    def passed(self) -> bool:
        return not self.failed


async def run_case(gate: PolicyGate, case: Case) -> CaseResult:
    """Ask `gate` the case's question and compare its answer with `case.expect`."""
    if case.event == "preGeneration":
        verdict = await gate.prompt(case.prompt)
    else:
        result = None
        if case.result is not None:
            result = ToolResult(case.result, is_error=case.result_is_error)
        verdict = await gate.tool_call(case.tool, case.arguments, result)
    if case.expect is None:
        return CaseResult(case, verdict, ("expect",))
    return CaseResult(case, verdict, mismatches(case.expect, verdict))


def mismatches(expect: Expect, verdict: Verdict) -> tuple[str, ...]:
    """The keys of `expect` that `verdict` does not meet; patterns are searched."""
    failed = []
    if expect.decision is not None and expect.decision != verdict.decision:
        failed.append("decision")
    if expect.by is not None and expect.by != verdict.by:
        failed.append("by")
    if expect.input is not None and dict(expect.input) != verdict.input:
        failed.append("input")
    patterns = {
        "reason": verdict.reason,
        "result": verdict.result,
        "prompt": verdict.prompt,
        "context": "\n".join(verdict.context) if verdict.context else None,
    }
    for key, actual in patterns.items():
        wanted = getattr(expect, key)
        if wanted is not None and (actual is None or re.search(wanted, actual) is None):
            failed.append(key)
    return tuple(failed)


def actual_values(verdict: Verdict) -> dict[str, Any]:
    """The answer, keyed as `expect` is: what `--update` writes and a diff shows."""
    return {
        "decision": verdict.decision,
        "by": verdict.by,
        "reason": verdict.reason,
        "input": dict(verdict.input) if verdict.input is not None else None,
        "result": verdict.result,
        "prompt": verdict.prompt,
        "context": "\n".join(verdict.context) if verdict.context else None,
    }


def diff_lines(result: CaseResult) -> list[str]:
    """`- expected` and `+ actual` for each key that failed, then who decided and why."""
    verdict = result.verdict
    actual = actual_values(verdict)
    lines: list[str] = []
    if result.case.expect is None:
        lines.append("no 'expect:' (hookgate hooks test --update writes the answer below)")
    else:
        for key in result.failed:
            lines.append(f"- {key}: {_shown(getattr(result.case.expect, key), key)}")
            lines.append(f"+ {key}: {_shown(actual[key], key)}")
    lines.append(f"decided by: {decided_by(verdict)}")
    lines.extend(f"hook said: {notice}" for notice in verdict.notices)
    return lines


def decided_by(verdict: Verdict) -> str:
    """Who gave the answer, as one phrase: `hook 'no-rm-rf': rm -rf is …`."""
    if verdict.by is None:
        return "nothing objected" if verdict.decision == "allow" else verdict.decision
    who = verdict.by
    if who not in ("permissions", "permission rule", "user") and not who.startswith("a "):
        who = f"hook {who!r}"
    return f"{who}: {verdict.reason}" if verdict.reason else who


def _shown(value: Any, key: str) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, Mapping):
        return json.dumps(dict(value), ensure_ascii=False)
    if key in ("reason", "result", "prompt", "context") and isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
