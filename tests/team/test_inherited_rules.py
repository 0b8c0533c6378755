"""A team member and an asked agent run under their caller's deny rules as well as
their own: a member with `yolo: true` does not get past the supervisor's rule. Real
`hookgate -p` with real children; the verdict is read off the file left in place."""

from __future__ import annotations

from typing import Any

from handoff.conftest import AgentDir
from runtime.project import Project
from team.conftest import WAIT, calls, create, team_entry

RULE = "shell(rm *)"


def delete_victim() -> dict[str, Any]:
    return calls({"name": "shell", "arguments": {"command": "rm -f victim"}})


def denied_somewhere(project: Project) -> bool:
    """Whether some session (a member's, an asked agent's) recorded the rule's denial."""
    return any(
        f"[denied by the permission rule '{RULE}']" in path.read_text()
        for path in project.session_files()
    )


def test_a_yolo_member_runs_under_the_supervisors_deny_rule(
    project: Project, supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir
) -> None:
    (project.dir / "victim").touch()
    supervisor.write(
        calls(create("clean up", "reviewer"), WAIT),
        {"text": "Done."},
        permissions={"allow": ["create_task", "wait_for_tasks"], "deny": [RULE]},
        team=team_entry(reviewer, tester),
    )
    reviewer.write(delete_victim(), {"expect": f"denied by the permission rule '{RULE}'",
                                     "text": "could not"}, yolo=True)  # fmt: skip
    tester.write({"text": "nothing to test"})

    done = project.hookgate("-p", "Clean up.")

    assert done.returncode == 0, done.stderr
    assert (project.dir / "victim").exists()
    assert "task 1 done (reviewer)" in done.stderr
    assert denied_somewhere(project)


def test_an_asked_agent_runs_under_its_askers_deny_rules_down_the_chain(
    project: Project, reviewer: AgentDir, tester: AgentDir
) -> None:
    (project.dir / "victim").touch()
    ask = {"name": "ask_agent", "arguments": {"agent": "reviewer", "question": "clean up"}}
    project.write_agent(
        project.script(calls(ask), {"text": "Done."}),
        permissions={"allow": ["ask_agent"], "deny": [RULE]},
        agents={"reviewer": {"file": str(reviewer.file)}},
    )
    # The reviewer asks the tester in turn: the rule reaches two hand-offs down.
    reviewer.write(
        calls({"name": "ask_agent", "arguments": {"agent": "tester", "question": "rm it"}}),
        {"text": "asked"}, yolo=True, agents={"tester": {"file": str(tester.file)}},
    )  # fmt: skip
    tester.write(delete_victim(), {"expect": f"'{RULE}'", "text": "could not"}, yolo=True)

    done = project.hookgate("-p", "Clean up.")

    assert done.returncode == 0, done.stderr
    assert (project.dir / "victim").exists()
    assert denied_somewhere(project)


def test_hooks_check_says_where_a_member_is_looser(
    project: Project, supervisor: AgentDir, reviewer: AgentDir, tester: AgentDir
) -> None:
    supervisor.write({"text": "hi"}, permissions={"deny": [RULE]},
                     team=team_entry(reviewer, tester))  # fmt: skip
    reviewer.write({"text": "hi"}, yolo=True)
    tester.write({"text": "hi"}, permissions={"deny": [RULE]})

    checked = project.hookgate("hooks", "check", "--strict")

    assert checked.returncode == 0, checked.stderr  # a note, not a warning
    assert (
        f"note: team member 'reviewer' ({reviewer.file}) is looser than this agent: it runs "
        f"with yolo: true; its deny rules lack '{RULE}'. It runs under this agent's deny "
        "rules as well as its own"
    ) in checked.stdout
    assert "'tester'" not in checked.stdout
