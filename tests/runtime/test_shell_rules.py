"""Shell permission rules through the real turn: the scripted model plays a hostile model.

Each command line is what a prompt-injected model would send to slip a second command
past a rule written for the first; the real shell tool runs whatever the policy lets
through, so the test reads the verdict off the files left in the project.
"""

from __future__ import annotations

from typing import Any

import pytest

from hookgate.runtime.toolcall import NOT_ASKED_RESULT
from hookgate.runtime.turn import run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView

pytestmark = pytest.mark.anyio


def shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def tool_answers(project: Project) -> list[str]:
    return [m["content"] for m in project.messages() if m["role"] == "tool"]


async def run_commands(project: Project, agent_opener: OpenAgent) -> list[str]:
    """Run one turn of the scripted model; the answers its tool calls got."""
    agent = await agent_opener()
    await run_turn(agent, "Tidy up", RecordingView())
    return tool_answers(project)


def script(project: Project, *commands: str) -> str:
    return project.script({"tool_calls": [shell(c) for c in commands]}, {"text": "Done."})


@pytest.mark.parametrize(
    ("allow", "command", "victim"),
    [
        ("shell(git status*)", "git status; id > pwned", "pwned"),
        ("shell(ls*)", "ls victim; rm -r victim", "victim"),
        ("shell(ls*)", "ls && rm -r victim", "victim"),
        ("shell(ls*)", "ls | rm -r victim", "victim"),
        ("shell(ls*)", "ls $(rm -r victim)", "victim"),
        ("shell(ls*)", "ls `rm -r victim`", "victim"),
        ("shell(ls*)", "ls\nrm -r victim", "victim"),
        ("shell(ls*)", "ls > pwned", "pwned"),
    ],
)
async def test_an_allow_rule_covers_a_call_only_if_it_covers_every_command(
    project: Project, open_project_agent: OpenAgent, allow: str, command: str, victim: str
) -> None:
    (project.dir / "victim").mkdir()
    project.write_agent(script(project, command), permissions={"allow": [allow]})

    answers = await run_commands(project, open_project_agent)

    # Not allowed by the rule, so consent is asked; without a terminal that denies.
    assert answers == [NOT_ASKED_RESULT]
    assert (project.dir / "victim").is_dir()
    assert not (project.dir / "pwned").exists()


async def test_an_allow_rule_still_allows_every_command_it_covers(
    project: Project, open_project_agent: OpenAgent
) -> None:
    project.write_agent(
        script(project, "ls; ls -a && touch made | cat"),
        permissions={"allow": ["shell(ls*)", "shell(touch made)", "shell(cat)"]},
    )

    answers = await run_commands(project, open_project_agent)

    assert answers[0] != NOT_ASKED_RESULT
    assert (project.dir / "made").exists()


@pytest.mark.parametrize(
    "command",
    [
        "rm a",
        " rm b",
        "command rm c",
        "true; rm d",
        "/bin/rm e",
        "\\rm f",
        "env X=1 nice -n 5 rm g",
        "sudo -n rm h",
        "bash -c 'rm i'",
        'sh -c "true && rm j"',
        "(cd . && rm k)",
        "{ rm l; }",
        "echo $(rm m)",
        "X=1 exec rm n",
        "'rm' o",
        "nohup rm p",
        "if true; then rm q; fi",
        "rm 'r",
    ],
)
async def test_a_deny_rule_fires_on_any_command_of_the_line_under_yolo(
    project: Project, open_project_agent: OpenAgent, command: str
) -> None:
    for name in "abcdefghijklmnopqr":
        (project.dir / name).touch()
    project.write_agent(script(project, command), yolo=True, permissions={"deny": ["shell(rm *)"]})

    answers = await run_commands(project, open_project_agent)

    # The rule, and where the line hid the command (`bash -c '…'`), when it did.
    hidden_in = {"bash -c 'rm i'": "rm i", 'sh -c "true && rm j"': "rm j"}
    why = f": it runs {hidden_in[command]} inside {command}" if command in hidden_in else ""
    assert answers == [f"[denied by the permission rule 'shell(rm *)'{why}]"]
    assert sorted(p.name for p in project.dir.iterdir() if len(p.name) == 1) == list(
        "abcdefghijklmnopqr"
    )
