"""Caps on a model reply: past them a call does not run, and the model reads why."""

from __future__ import annotations

from typing import Any

import pytest

from hookgate.runtime.turn import run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView

pytestmark = pytest.mark.anyio


def write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


async def play(project: Project, open_project_agent: OpenAgent, calls: list[Any],
               **settings: Any) -> list[str]:  # fmt: skip
    model = project.script({"tool_calls": calls}, {"text": "Done."})
    project.write_agent(model, yolo=True, **settings)
    agent = await open_project_agent()
    await run_turn(agent, "go", RecordingView())
    return [m["content"] for m in project.messages() if m["role"] == "tool"]


async def test_calls_past_the_default_64_of_a_reply_do_not_run(
    project: Project, open_project_agent: OpenAgent
) -> None:
    calls = [write(f"f{n}", "x") for n in range(66)]
    answers = await play(project, open_project_agent, calls)
    assert len(answers) == 66
    assert all(answer.startswith("created") for answer in answers[:64])
    assert answers[64].startswith(
        "[not run: a reply may make at most 64 tool calls (max_tool_calls); this was call 65 of 66"
    )
    assert not (project.dir / "f64").exists()
    assert not (project.dir / "f65").exists()


async def test_the_per_reply_cap_comes_from_the_agent_file_and_drops_the_arguments(
    project: Project, open_project_agent: OpenAgent
) -> None:
    calls = [write("a", "x"), write("b", "y"), write("c", "SECRET-UNSCREENED")]
    answers = await play(project, open_project_agent, calls, max_tool_calls=2)
    assert answers[2].startswith("[not run: a reply may make at most 2 tool calls")
    (reply,) = [m for m in project.messages() if m.get("tool_calls")]
    assert reply["tool_calls"][2]["arguments"] == {}
    assert "SECRET-UNSCREENED" not in "".join(p.read_text() for p in project.files_under_home())


async def test_a_call_with_arguments_past_the_size_cap_does_not_run(
    project: Project, open_project_agent: OpenAgent
) -> None:
    calls = [write("big", "x" * 200), write("small", "x")]
    answers = await play(project, open_project_agent, calls, max_argument_bytes=150)
    assert answers[0].startswith("[not run: its arguments take 230 bytes, more than the 150")
    assert answers[1] == "created small (1 bytes)"
    assert not (project.dir / "big").exists()


async def test_the_default_size_cap_is_one_mebibyte(
    project: Project, open_project_agent: OpenAgent
) -> None:
    (answer,) = await play(project, open_project_agent, [write("big", "x" * (1024 * 1024))])
    assert "more than the 1048576 a call may carry (max_argument_bytes)" in answer


@pytest.mark.parametrize("key", ["max_tool_calls", "max_argument_bytes"])
def test_a_bad_cap_is_a_config_error(project: Project, key: str) -> None:
    project.write_agent(project.script({"text": "hi"}), **{key: 0})
    result = project.hookgate("-p", "hi")
    assert result.returncode == 1
    assert f"{key}: expected a positive whole number, got a number 0" in result.stderr
