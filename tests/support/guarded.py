"""A project whose guardrail blocks the same call in two turns: for approve-once tests."""

from __future__ import annotations

import json

from runtime.project import Project

#: The call the model makes in each turn.
CALL = {"name": "shell", "arguments": {"command": "touch once.txt"}}


def guarded_twice(project: Project) -> None:
    """The model makes `CALL` in two turns; the guardrail blocks it each time, and the
    model of the second turn expects to read the denial."""
    model = project.script(
        {"tool_calls": [CALL]}, {"text": "Done."},
        {"tool_calls": [CALL]}, {"expect": "denied by guardrail 'shell'", "text": "Blocked."},
    )  # fmt: skip
    (project.dir / "verdicts.yaml").write_text(
        json.dumps([{"decision": "block", "reason": "it touches a file"}])
    )
    project.write_agent(model, yolo=True, guardrails={"model": "scripted:verdicts.yaml"})
