"""`hookgate hooks replay`: each recorded question and tool call through today's gate.

Every hook runs for real, with `HOOKGATE_REPLAY=1` in its environment (an audit hook
can skip a replay); the tools do not. A call goes through the gate with the result
it had then, so the postToolCall hooks judge what the tool really returned. Prints
a line an item and a summary, or `--json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from hookgate.hooks.records import NamedTuple
from hookgate.policytest.evaluate import decided_by
from hookgate.policytest.gate import PolicyGate, Verdict
from hookgate.policytest.replay.recorded import RecordedCall, RecordedPrompt, Recording
from hookgate.policytest.replay.sources import read_source, session_file

#: What marks a hook's run as a replay: the hooks see it in their environment.
REPLAY_ENV = "HOOKGATE_REPLAY"


class Replayed(NamedTuple):
    recording: Recording
    item: RecordedCall | RecordedPrompt | None
    """None for an event of the session as a whole (`--all-events`' sessionStart)."""
    event: str
    verdict: Verdict


def run_replay_command(args: argparse.Namespace) -> int:
    # This process is the replay: a Python hook, which runs in it, can tell as well.
    os.environ[REPLAY_ENV] = "1"
    recordings = [read_source(source, open_session=session_file) for source in args.sources]
    replayed = asyncio.run(replay(args.config, recordings, all_events=args.all_events))
    if args.json:
        json.dump(as_json(args.config, replayed), sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print_report(args.config, replayed, sys.stdout)
    return 0


async def replay(
    agent_file: Path, recordings: Sequence[Recording], *, all_events: bool = False
) -> list[Replayed]:
    """Every item of every recording through `agent_file`'s gate, one gate per project
    folder (a recording's own where it names one that exists)."""
    environ = {**os.environ, REPLAY_ENV: "1"}
    gates: dict[Path | None, PolicyGate] = {}
    done: list[Replayed] = []
    try:
        for recording in recordings:
            where = recording.cwd if recording.cwd is not None and recording.cwd.is_dir() else None
            if where not in gates:
                gates[where] = PolicyGate.open(agent_file, project_dir=where, environ=environ)
            done += await _replay_one(gates[where], recording, all_events)
    finally:
        for gate in gates.values():
            await gate.aclose()
    return done


async def _replay_one(gate: PolicyGate, recording: Recording, all_events: bool) -> list[Replayed]:
    done = []
    if all_events:
        start = await gate.event("sessionStart", {"source": "resume"})
        done.append(Replayed(recording, None, "sessionStart", start))
    for item in recording.items:
        if isinstance(item, RecordedPrompt):
            done.append(Replayed(recording, item, "preGeneration", await gate.prompt(item.text)))
            if all_events:
                payload = {"prompt": item.text, "answer": item.answer, "outcome": "answered",
                           "continued": False}  # fmt: skip
                verdict = await gate.event("postGeneration", payload)
                done.append(Replayed(recording, item, "postGeneration", verdict))
            continue
        gate.add_tool(item.tool)  # a tool this agent file does not offer: asked like MCP's
        verdict = await gate.tool_call(item.tool, item.arguments, item.result)
        done.append(Replayed(recording, item, "toolCall", verdict))
    return done


def summary(replayed: Sequence[Replayed]) -> dict[str, int]:
    calls = [r.verdict for r in replayed if r.event == "toolCall"]
    prompts = [r.verdict for r in replayed if r.event == "preGeneration"]
    return {
        "calls": len(calls),
        "now_denied": sum(1 for v in calls if v.decision in ("deny", "stop")),
        "now_asking": sum(1 for v in calls if v.decision == "ask"),
        "rewritten": sum(1 for v in calls if v.rewritten),
        "results_replaced": sum(1 for v in calls if v.replaced),
        "prompts": len(prompts),
        "prompts_now_blocked": sum(1 for v in prompts if v.decision == "block"),
        "prompts_rewritten": sum(1 for v in prompts if v.rewritten),
    }


def print_report(agent_file: Path, replayed: Sequence[Replayed], out: TextIO) -> None:
    """A line an item under a line a source, then the summary."""
    source = None
    for entry in replayed:
        if entry.recording is not source:
            source = entry.recording
            print(f"{source.source}  ({source.format}; agent {agent_file})", file=out)
        print(f"  {_line(entry)}", file=out)
    counts = summary(replayed)
    print(
        f"\n{counts['calls']} calls: {counts['now_denied']} now denied, "
        f"{counts['now_asking']} now asking, {counts['rewritten']} rewritten, "
        f"{counts['results_replaced']} results replaced; {counts['prompts']} questions: "
        f"{counts['prompts_now_blocked']} now blocked, {counts['prompts_rewritten']} rewritten",
        file=out,
    )


def _line(entry: Replayed) -> str:
    item, verdict = entry.item, entry.verdict
    now = f"{verdict.decision} ({decided_by(verdict)})"
    if verdict.replaced and verdict.decision != "replace":
        now += ", result replaced"
    at = f":{item.line}" if item is not None else ""
    if isinstance(item, RecordedCall) and entry.event == "toolCall":
        arguments = json.dumps(dict(item.arguments), ensure_ascii=False)
        shown = arguments if len(arguments) <= 80 else arguments[:79] + "…"
        return f"{at:<6} {item.tool} {shown}  {item.then} → now {now}"
    if isinstance(item, RecordedPrompt) and entry.event == "preGeneration":
        text = item.text.replace("\n", " ")
        return f"{at:<6} question {json.dumps(text[:60] + ('…' if len(text) > 60 else ''))} → now {now}"
    return f"{at:<6} {entry.event} → {now}"


def as_json(agent_file: Path, replayed: Sequence[Replayed]) -> dict[str, Any]:
    items = []
    for entry in replayed:
        item, verdict = entry.item, entry.verdict
        record: dict[str, Any] = {
            "source": entry.recording.source,
            "format": entry.recording.format,
            "event": entry.event,
            "line": item.line if item is not None else None,
        }
        if isinstance(item, RecordedCall):
            record.update(tool=item.tool, agent_tool=item.agent_tool,
                          arguments=dict(item.arguments), then=item.then)  # fmt: skip
        elif isinstance(item, RecordedPrompt):
            record["prompt"] = item.text
        record["now"] = {
            "decision": verdict.decision, "by": verdict.by, "reason": verdict.reason,
            "input": verdict.input, "result": verdict.result if verdict.replaced else None,
            "rewritten": verdict.rewritten, "replaced": verdict.replaced,
            "context": list(verdict.context),
        }  # fmt: skip
        items.append(record)
    return {"agent": str(agent_file), "items": items, "summary": summary(replayed)}
