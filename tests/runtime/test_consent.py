"""Consent comes after the hooks and the permission rules: a denied call asks no one.

`RecordingConsent` is a real `Consent`: it answers as told and keeps every request,
so a test sees exactly which calls would have shown a prompt.
"""

from __future__ import annotations

from typing import Any

import pytest

from hookgate.runtime.consent import ConsentRequest
from hookgate.runtime.turn import run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView

pytestmark = pytest.mark.anyio


class RecordingConsent:
    """Answers every request with `allow` and remembers it."""

    def __init__(self, *, allow: bool) -> None:
        self.allow = allow
        self.requests: list[ConsentRequest] = []

    async def ask(self, request: ConsentRequest) -> bool:
        self.requests.append(request)
        return self.allow


def shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def guarded(project: Project, **settings: Any) -> None:
    """Two shell calls, one of which the rm -rf guard example denies."""
    (project.dir / "build").mkdir()
    model = project.script(
        {"tool_calls": [shell("rm -rf build"), shell("touch ok")]}, {"text": "Done."}
    )
    guard = {"name": "no-rm-rf", "matcher": "^shell$", "onError": "fail",
             "command": project.example("guard-rm-rf.sh")}  # fmt: skip
    project.write_agent(model, hooks={"preToolCall": [guard]}, **settings)


def tool_answers(project: Project) -> list[str]:
    return [m["content"] for m in project.messages() if m["role"] == "tool"]


async def test_a_call_a_hook_denies_never_reaches_consent(
    project: Project, open_project_agent: OpenAgent
) -> None:
    guarded(project)
    consent = RecordingConsent(allow=True)
    agent = await open_project_agent(consent=consent)

    await run_turn(agent, "Clean up, then touch ok", RecordingView())

    assert consent.requests == [ConsentRequest("shell", {"command": "touch ok"})]
    assert (project.dir / "build").is_dir()
    assert (project.dir / "ok").exists()
    denied, allowed = tool_answers(project)
    assert denied.startswith("[denied by a hook: rm -rf is not allowed")
    assert allowed == "[no output]"


async def test_a_refusal_answers_the_model_and_nothing_runs(
    project: Project, open_project_agent: OpenAgent
) -> None:
    guarded(project)
    consent = RecordingConsent(allow=False)
    agent = await open_project_agent(consent=consent)

    await run_turn(agent, "Clean up, then touch ok", RecordingView())

    assert len(consent.requests) == 1
    assert not (project.dir / "ok").exists()
    assert tool_answers(project)[1] == "[denied by the user]"


async def test_with_yolo_nothing_is_asked_and_the_guard_still_denies(
    project: Project, open_project_agent: OpenAgent
) -> None:
    guarded(project, yolo=True)
    consent = RecordingConsent(allow=False)
    agent = await open_project_agent(consent=consent)

    await run_turn(agent, "Clean up, then touch ok", RecordingView())

    assert consent.requests == []
    assert (project.dir / "build").is_dir()
    assert (project.dir / "ok").exists()
    assert tool_answers(project)[0].startswith("[denied by a hook:")


@pytest.mark.parametrize(
    ("permissions", "asked", "ran"),
    [
        ({"deny": ["shell(touch *)"]}, False, False),
        ({"allow": ["shell(touch *)"]}, False, True),
        ({"allow": ["read_file"]}, True, True),
    ],
    ids=["deny-rule", "allow-rule", "no-rule"],
)
async def test_permission_rules_decide_before_consent(
    project: Project,
    open_project_agent: OpenAgent,
    permissions: dict[str, list[str]],
    asked: bool,
    ran: bool,
) -> None:
    project.write_agent(
        project.script({"tool_calls": [shell("touch made")]}, {"text": "Done."}),
        permissions=permissions,
    )
    consent = RecordingConsent(allow=True)
    agent = await open_project_agent(consent=consent)

    await run_turn(agent, "Make it", RecordingView())

    assert bool(consent.requests) is asked
    assert (project.dir / "made").exists() is ran


async def test_consent_is_asked_about_the_arguments_that_will_run(
    project: Project, open_project_agent: OpenAgent
) -> None:
    swap = """echo '{"arguments": {"command": "touch safer"}}'"""
    project.write_agent(
        project.script({"tool_calls": [shell("touch risky")]}, {"text": "Done."}),
        hooks={"preToolCall": [{"name": "swap", "command": swap}]},
    )
    consent = RecordingConsent(allow=True)
    agent = await open_project_agent(consent=consent)

    await run_turn(agent, "Make it", RecordingView())

    assert consent.requests == [ConsentRequest("shell", {"command": "touch safer"}, rewritten=True)]
    assert "(arguments rewritten by a hook)" in consent.requests[0].describe()
    assert (project.dir / "safer").exists()


@pytest.mark.parametrize(
    ("allow", "command", "why"),
    [
        ("shell(printf *)", "printf -v 'a[$(touch pwned)]' 1",
         "this command builds part of itself at run time: a[$(touch pwned)] is an array "
         "subscript bash evaluates, running its code"),
        ("shell(ls *)", "ls $HOME", "this command builds part of itself at run time ($HOME)"),
        ("shell(echo *)", "echo hi >& pwned",
         "it writes to a file through a redirect (>& pwned)"),
    ],
)  # fmt: skip
async def test_the_prompt_says_why_an_allow_rule_did_not_cover_the_call(
    project: Project, open_project_agent: OpenAgent, allow: str, command: str, why: str
) -> None:
    project.write_agent(
        project.script({"tool_calls": [shell(command)]}, {"text": "Done."}),
        permissions={"allow": [allow]},
    )
    consent = RecordingConsent(allow=False)
    agent = await open_project_agent(consent=consent)

    await run_turn(agent, "Go", RecordingView())

    (request,) = consent.requests
    assert request.details().endswith(f"\n  no allow rule covers it: {why}")
    assert not (project.dir / "pwned").exists()
