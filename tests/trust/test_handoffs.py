"""Hand-off children import nothing from the project, and run the asked agent's file as
it was trusted when the asking session started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookgate.handoff import Handoffs, delegate
from hookgate.handoff.delegate import Returned
from hookgate.runtime.turn import run_turn
from hookgate.security.trust.record import trust_agent_file
from hookgate.security.trust.store import TrustStore
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView

pytestmark = pytest.mark.anyio


def write_helper(project: Project, text: str = "helped") -> Path:
    helper = project.dir.parent / "helper"
    helper.mkdir(exist_ok=True)
    (helper / "script.yaml").write_text(json.dumps([{"text": text}]))
    (helper / "hookgate.yaml").write_text('{"model": "scripted:script.yaml"}')
    return helper / "hookgate.yaml"


async def test_a_module_the_model_wrote_into_the_project_is_not_imported_by_the_child(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    """`src/../argparse.py` then `ask_agent`: once code execution; now a plain file."""
    marker = tmp_path / "imported"
    planted = f"open({str(marker)!r}, 'w').close()\n"
    script = project.script(
        {"tool_calls": [{"name": "write_file",
                         "arguments": {"path": "src/../argparse.py", "content": planted}}]},
        {"tool_calls": [{"name": "ask_agent", "arguments": {"agent": "helper", "question": "?"}}]},
        {"text": "done"},
    )  # fmt: skip
    project.write_agent(script, yolo=True, agents={"helper": {"file": str(write_helper(project))}})
    agent = await open_project_agent()

    view = RecordingView()
    await run_turn(agent, "Plant, then ask", view)

    assert (project.dir / "argparse.py").read_text() == planted
    assert view.finished[1][1].content == "helped", view.finished[1][1].content
    assert not marker.exists()


async def open_asker(project: Project, open_project_agent: OpenAgent) -> tuple[Handoffs, Path]:
    """The project's agent, opened (so its hand-offs pinned), asking `helper`."""
    helper = write_helper(project)
    project.write_agent(
        project.script({"text": "unused"}), agents={"helper": {"file": str(helper)}}
    )
    agent = await open_project_agent()
    assert agent.handoffs is not None
    return agent.handoffs, helper


async def test_an_asked_file_trusted_anew_mid_session_waits_for_the_next_session(
    project: Project, open_project_agent: OpenAgent
) -> None:
    handoffs, helper = await open_asker(project, open_project_agent)
    (helper.parent / "script.yaml").write_text(json.dumps([{"text": "another helper"}]))
    helper.write_text('{"model": "scripted:script.yaml", "system": "changed"}')
    trust_agent_file(helper, store=TrustStore(project.home))

    outcome = await delegate(handoffs, "helper", "question")

    assert isinstance(outcome, Returned)
    assert outcome.error is not None
    assert "trusted anew after the asking agent's session started" in outcome.error
    assert outcome.answer == ""


async def test_an_asked_file_changed_mid_session_is_refused(
    project: Project, open_project_agent: OpenAgent
) -> None:
    handoffs, helper = await open_asker(project, open_project_agent)
    helper.write_bytes(helper.read_bytes() + b"\n")

    outcome = await delegate(handoffs, "helper", "question")

    assert isinstance(outcome, Returned)
    assert outcome.error is not None
    assert f"{helper} is not trusted: asked agent's file {helper} changed" in outcome.error
