"""The agent file's `team:`: strict, with the line of every mistake; members' files are
in the supervisor's trust closure; the supervisor's tools exist only with a team."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from handoff.conftest import AgentDir, OpenAsker
from hookgate.config.agentfile import DEFAULT_MAX_PARALLEL, DEFAULT_MAX_ROUNDS, load_agent_file
from hookgate.errors import ConfigError
from hookgate.security.trust.check import Untrusted, require_trust
from hookgate.security.trust.record import trust_agent_file
from hookgate.security.trust.store import TrustStore
from runtime.project import Project
from team.conftest import team_entry

pytestmark = pytest.mark.anyio


def write(tmp_path: Path, team: str) -> Path:
    path = tmp_path / "hookgate.yaml"
    path.write_text(f"model: scripted:s.yaml\nteam:\n{team}")
    return path


def test_a_team_with_its_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "  name: release\n  members:\n    reviewer: {file: r/hookgate.yaml}\n")

    team = load_agent_file(path).team

    assert team is not None
    assert (team.name, team.max_parallel, team.max_rounds) == (
        "release", DEFAULT_MAX_PARALLEL, DEFAULT_MAX_ROUNDS,
    )  # fmt: skip
    assert team.members["reviewer"].file == (tmp_path / "r" / "hookgate.yaml").resolve()


@pytest.mark.parametrize(
    ("team", "expected"),
    [
        ("  members: {a: {file: a.yaml}}\n", ":2: team: expected a team name, got nothing"),
        ("  name: t\n", ":2: team: a team needs members"),
        ("  name: t\n  members: {a: {file: a.yaml}}\n  max_parallel: 0\n",
         ":5: team.max_parallel: expected a positive whole number, got a number 0"),
        ("  name: t\n  members: {a: {file: a.yaml}}\n  max_rounds: two\n",
         ":5: team.max_rounds: expected a positive whole number, got a string 'two'"),
        ("  name: t\n  members: {a: {flie: a.yaml}}\n", ":4: team.members.a.flie: unknown key 'flie'"),
        ("  name: t\n  memebrs: {a: {file: a.yaml}}\n", ":4: team.memebrs: unknown key 'memebrs'"),
    ],
)  # fmt: skip
def test_mistakes_name_the_line_key_and_value(tmp_path: Path, team: str, expected: str) -> None:
    path = write(tmp_path, team)

    with pytest.raises(ConfigError) as caught:
        load_agent_file(path)

    assert expected in str(caught.value)


def test_a_team_members_file_is_in_the_supervisors_trust_closure(
    project: Project, supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir
) -> None:
    supervisor.write({"text": "x"}, team=team_entry(reviewer, tester))
    reviewer.write({"text": "reviewed"})
    tester.write({"text": "tested"})
    store = TrustStore(project.home)
    trust_agent_file(supervisor.file, store=store)
    require_trust(reviewer.file, store=store)  # trusted with its supervisor

    tester.write({"text": "tested"}, yolo=True)  # the member now runs anything

    with pytest.raises(Untrusted, match=f"team member's file {tester.file} changed"):
        require_trust(supervisor.file, store=store)


@pytest.mark.parametrize("team", [True, False])
async def test_the_supervisor_tools_exist_only_with_a_team(
    supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir, open_asker: OpenAsker, team: bool
) -> None:
    settings: dict[str, Any] = {"team": team_entry(reviewer, tester)} if team else {}
    supervisor.write({"text": "x"}, **settings)

    agent = await open_asker()

    names = {"create_task", "list_tasks", "wait_for_tasks"}
    assert (names <= set(agent.gate.tools.names())) is team
    assert not names & set(agent.gate.tools.names()) or team


@pytest.mark.parametrize("team", [True, False])
def test_hooks_check_warns_of_team_hooks_in_a_file_without_a_team(
    project: Project, supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir, team: bool
) -> None:
    settings: dict[str, Any] = {"team": team_entry(reviewer, tester)} if team else {}
    supervisor.write({"text": "x"}, hooks={"taskCreated": [{"command": "true"}]}, **settings)

    done = project.hookgate("hooks", "check", "--strict")

    warning = "taskCreated fires only for a team's supervisor and this file declares no 'team:'"
    assert (warning in done.stderr) is not team
    assert done.returncode == (0 if team else 1), done.stderr
