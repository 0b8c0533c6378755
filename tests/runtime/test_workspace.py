"""Paths as a hostile model spells them: rules and tools see the file a path reaches.

The scripted model plays the model; the real turn runs the real tools in a scratch
project, with `$HOOKGATE_HOME` and an "outside" directory next to it.
"""

from __future__ import annotations

from typing import Any

import pytest

from hookgate.runtime.toolcall import NOT_ASKED_RESULT
from hookgate.runtime.turn import run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView
from runtime.test_consent import RecordingConsent

pytestmark = pytest.mark.anyio


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def tool_answers(project: Project) -> list[str]:
    return [m["content"] for m in project.messages() if m["role"] == "tool"]


async def run_calls(
    project: Project,
    open_project_agent: OpenAgent,
    calls: list[dict[str, Any]],
    consent: RecordingConsent | None = None,
    **settings: Any,
) -> list[str]:
    """One model reply making `calls`, then an answer; the tools' answers, in order."""
    model = project.script({"tool_calls": calls}, {"text": "Done."})
    project.write_agent(model, **settings)
    agent = await open_project_agent(**({"consent": consent} if consent else {}))
    await run_turn(agent, "go", RecordingView())
    return tool_answers(project)


@pytest.mark.parametrize("path", ["notes/../../outside/x", "notes/../hookgate.yaml"])
async def test_an_allow_rule_on_a_folder_does_not_cover_a_path_that_climbs_out(
    project: Project, open_project_agent: OpenAgent, path: str
) -> None:
    (project.dir / "notes").mkdir()
    (project.dir.parent / "outside").mkdir()
    (answer,) = await run_calls(
        project, open_project_agent, [call("write_file", path=path, content="pwned")],
        permissions={"allow": ["write_file(notes/*)"]},
    )  # fmt: skip
    assert answer == NOT_ASKED_RESULT  # no one to ask: -p without a terminal says no
    assert not (project.dir.parent / "outside" / "x").exists()
    assert "pwned" not in project.agent_file.read_text()


async def test_an_allow_rule_on_a_folder_covers_the_files_in_it(
    project: Project, open_project_agent: OpenAgent
) -> None:
    (project.dir / "notes").mkdir()
    (answer,) = await run_calls(
        project, open_project_agent, [call("write_file", path="./notes//a.txt", content="x")],
        permissions={"allow": ["write_file(notes/*)"]},
    )  # fmt: skip
    assert answer == "created notes/a.txt (1 bytes)"


@pytest.mark.parametrize(
    ("rule", "spelling"),
    [("/etc/*", "//etc/hostname"), ("x", "./x"), ("../x", "../x"), ("x", "sub/../x")],
)
async def test_a_deny_rule_catches_every_spelling_of_a_path(
    project: Project, open_project_agent: OpenAgent, rule: str, spelling: str
) -> None:
    (project.dir / "sub").mkdir()
    (answer,) = await run_calls(
        project, open_project_agent, [call("read_file", path=spelling)],
        permissions={"deny": [f"read_file({rule})"]}, yolo=True,
    )  # fmt: skip
    assert answer == f"[denied by the permission rule 'read_file({rule})']"


async def test_a_symlink_is_judged_as_the_file_it_reaches(
    project: Project, open_project_agent: OpenAgent
) -> None:
    (project.dir / "notes").mkdir()
    (project.dir / "notes" / "link").symlink_to(project.agent_file)
    (answer,) = await run_calls(
        project, open_project_agent, [call("edit_file", path="notes/link", old_string="model",
                                           new_string="pwned")],
        permissions={"allow": ["edit_file(notes/*)"]},
    )  # fmt: skip
    assert answer == NOT_ASKED_RESULT
    assert "pwned" not in project.agent_file.read_text()


async def test_reading_outside_the_workspace_asks(
    project: Project, open_project_agent: OpenAgent
) -> None:
    secret = project.dir.parent / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("s3cret")
    consent = RecordingConsent(allow=False)
    answers = await run_calls(
        project, open_project_agent,
        [call("read_file", path="../outside/secret.txt"), call("grep", pattern="s3cret",
                                                               path="../outside")],
        consent,
    )  # fmt: skip
    assert answers == ["[denied by the user]", "[denied by the user]"]
    assert [request.tool for request in consent.requests] == ["read_file", "grep"]


async def test_workspace_dirs_are_reached_without_asking(
    project: Project, open_project_agent: OpenAgent
) -> None:
    shared = project.dir.parent / "shared"
    shared.mkdir()
    (shared / "lib.txt").write_text("common code")
    consent = RecordingConsent(allow=False)
    (answer,) = await run_calls(
        project, open_project_agent, [call("read_file", path="../shared/lib.txt")], consent,
        workspace={"dirs": ["../shared"]},
    )  # fmt: skip
    assert answer == "common code"
    assert consent.requests == []


async def test_hookgate_home_is_refused_even_with_yolo_and_allow_rules(
    project: Project, open_project_agent: OpenAgent
) -> None:
    other = project.home / "archive" / "other-project.jsonl"
    other.parent.mkdir(parents=True)
    other.write_text('{"secret": "another project"}\n')
    (project.dir / "peek").symlink_to(project.home)
    answers = await run_calls(
        project, open_project_agent,
        [call("read_file", path=str(other)), call("grep", pattern="another", path=str(project.home)),
         call("grep", pattern="anoth[e]r project"), call("list_files", path="peek")],
        yolo=True, permissions={"allow": ["read_file", "grep", "list_files"]},
    )  # fmt: skip
    assert "hookgate's own data directory" in answers[0]
    assert "hookgate's own data directory" in answers[1]
    assert answers[2] == "no matches for 'anoth[e]r project'"
    assert "hookgate's own data directory" in answers[3]


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
async def test_the_agent_file_is_never_written_by_the_model(
    project: Project, open_project_agent: OpenAgent, tool: str
) -> None:
    arguments = {"content": "model: x"} if tool == "write_file" else {
        "old_string": "scripted", "new_string": "pwned"}  # fmt: skip
    (answer,) = await run_calls(
        project, open_project_agent, [call(tool, path="./hookgate.yaml", **arguments)],
        yolo=True, permissions={"allow": [tool]},
    )  # fmt: skip
    assert "is protected" in answer
    assert "scripted" in project.agent_file.read_text()


async def test_a_bad_workspace_dir_is_a_config_error_with_its_line(
    project: Project,
) -> None:
    project.write_agent(project.script({"text": "hi"}), workspace={"dirs": ["missing"]})
    result = project.hookgate("-p", "hi")
    assert result.returncode == 1
    assert "workspace" in result.stderr
    assert "'missing' is not a directory" in result.stderr
    assert "Traceback" not in result.stderr


def test_print_mode_denies_a_read_outside_the_workspace_unless_a_rule_allows_it(
    project: Project,
) -> None:
    secret = project.dir.parent / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("s3cret")
    read = call("read_file", path="../outside/secret.txt")
    for allow, expected in (([], NOT_ASKED_RESULT), (["read_file(../outside/*)"], "s3cret")):
        project.write_agent(
            project.script({"tool_calls": [read]}, {"text": "ok"}), permissions={"allow": allow}
        )
        for session in project.session_files():
            session.unlink()
        result = project.hookgate("-p", "read it")
        assert result.returncode == 0, result.stderr
        assert tool_answers(project) == [expected]
