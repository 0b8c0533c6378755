"""`hookgate hooks check | fire` on a whole agent file, as a user runs them: the same
errors a session gives, `--strict` for CI, one option name for the agent file."""

from __future__ import annotations

import pytest

from runtime.project import Project


@pytest.mark.parametrize(
    ("mistake", "expected", "hint"),
    [
        ("hook", "unknown key 'hook'", "did you mean 'hooks'?"),
        ("permisions", "unknown key 'permisions'", "did you mean 'permissions'?"),
    ],
)
def test_check_refuses_what_a_session_refuses(
    project: Project, mistake: str, expected: str, hint: str
) -> None:
    project.agent_file.write_text(f"model: scripted:s.yaml\n{mistake}:\n  preToolCall: []\n")

    check = project.hookgate("hooks", "check", trusted=False)
    session = project.hookgate("-p", "Hi", trusted=False)

    assert check.returncode == 1, check.stdout
    assert expected in check.stderr
    assert hint in check.stderr
    assert check.stderr.splitlines()[0] in session.stderr  # the very same line
    assert "valid" not in check.stdout


def test_check_strict_fails_on_warnings_for_ci(project: Project) -> None:
    project.write_agent("scripted:s.yaml", hooks={"preToolCall": [{"command": "./missing.sh"}]})

    relaxed = project.hookgate("hooks", "check", trusted=False)
    strict = project.hookgate("hooks", "check", "--strict", trusted=False)

    assert relaxed.returncode == 0
    assert strict.returncode == 1
    assert "./missing.sh: no such file" in strict.stderr


def test_fire_with_a_missing_agent_file_is_an_error(project: Project) -> None:
    run = project.hookgate(
        "hooks", "fire", "preGeneration", "--agent", "nowhere.yaml", stdin='{"prompt": "x"}',
        trusted=False,
    )  # fmt: skip

    assert run.returncode == 1
    assert "nowhere.yaml: no such file" in run.stderr
    assert run.stdout == ""


@pytest.mark.parametrize("option", ["--agent", "--config"])
def test_one_option_names_the_agent_file_everywhere(project: Project, option: str) -> None:
    project.write_agent(project.script({"text": "Hi."}))
    project.agent_file.rename(project.dir / "other.yaml")
    project.trust(project.dir / "other.yaml")

    check = project.hookgate("hooks", "check", option, "other.yaml", trusted=False)
    fire = project.hookgate(
        "hooks", "fire", "preGeneration", option, "other.yaml", stdin='{"prompt": "x"}',
        trusted=False,
    )  # fmt: skip
    session = project.hookgate(option, "other.yaml", "-p", "Hello", trusted=False)

    assert (check.returncode, fire.returncode) == (0, 0), check.stderr + fire.stderr
    assert (session.returncode, session.stdout) == (0, "Hi.\n"), session.stderr


def test_fire_takes_the_hand_off_name_as_agent_name(project: Project) -> None:
    project.write_agent(
        "scripted:s.yaml",
        hooks={"subagentStart": [{"matcher": "^helper$", "command": "true"}]},
    )

    helper = project.hookgate(
        "hooks", "fire", "subagentStart", "--agent-name", "helper", stdin="{}", trusted=False
    )
    other = project.hookgate(
        "hooks", "fire", "subagentStart", "--agent-name", "other", stdin="{}", trusted=False
    )

    assert (helper.returncode, other.returncode) == (0, 0), helper.stderr
    assert '"hooks_run": 1' in helper.stdout
    assert '"hooks_run": 0' in other.stdout


def test_a_session_shows_the_lint_warnings_as_notices(project: Project) -> None:
    project.write_agent(
        project.script({"text": "Hi."}),
        hooks={"postGeneration": [{"name": "broken", "command": "echo $((", "onError": "ignore"}]},
    )

    run = project.hookgate("-p", "Hello")

    assert run.returncode == 0, run.stderr
    assert any(
        line.startswith("hookgate: warning: hook 'broken'") and "cannot parse" in line
        for line in run.stderr.splitlines()
    ), run.stderr
