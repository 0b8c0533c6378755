"""`hookgate hooks check` as a new user meets it: the file as an argument, every mistake
of a file in one run, and the one-line fix for the common misplacements."""

from __future__ import annotations

import json

import pytest

from runtime.project import Project

MODEL = "model: scripted:s.yaml\n"


def check(project: Project, *args: str) -> tuple[int, str]:
    done = project.hookgate("hooks", "check", *args, trusted=False)
    return done.returncode, done.stdout + done.stderr


def test_the_file_is_a_positional_argument_too(project: Project) -> None:
    (project.dir / "b1.yaml").write_text(MODEL + "hooks:\n  preToolCall: []\n")

    code, said = check(project, "b1.yaml")

    assert code == 0, said
    assert "b1.yaml: valid, 0 hooks" in said


def test_every_mistake_of_a_file_is_reported_in_one_run(project: Project) -> None:
    project.agent_file.write_text(
        MODEL + "max_step: 3\n"
        "hooks:\n"
        "  preToolCall:\n"
        "    - {command: ./a.sh, timeout: 10 sec}\n"
        "    - {command: ./b.sh, on_error: warn}\n"
        "  postGenration:\n"
        "    - {command: ./c.sh}\n"
    )

    code, said = check(project)

    assert code == 1
    for mistake in ("unknown key 'max_step'", "got a string '10 sec'",
                    "unknown key 'on_error'", "unknown event 'postGenration'"):  # fmt: skip
        assert mistake in said, said


def test_a_hook_event_at_the_top_level_says_put_it_under_hooks(project: Project) -> None:
    project.agent_file.write_text(MODEL + "preGeneration:\n  - command: ./redact.sh\n")

    code, said = check(project)

    assert code == 1
    assert "'preGeneration' is a hook event, at the top level" in said
    assert "put it under hooks:" in said
    # Named as every other unknown key is (the fuzzing spec found it was not: `Stop`).
    assert "hookgate.yaml:2: preGeneration: unknown key 'preGeneration': " in said
    assert "known keys" not in said


def test_claude_codes_settings_file_as_the_agent_points_at_the_two_ways(
    project: Project,
) -> None:
    settings = project.dir / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {"A": "1"}, "hooks": {"PreToolUse": []}}))

    code, said = check(project, "--agent", ".claude/settings.json")

    assert code == 1
    assert "claude_settings: true" in said
    assert "hookgate hooks import-claude" in said
    assert "unknown key" not in said


def test_a_guard_whose_script_is_missing_is_a_warning_under_the_default_on_error(
    project: Project,
) -> None:
    project.write_agent("scripted:s.yaml", hooks={"preToolCall": [
        {"name": "guard", "command": "python3 hooks/guard.py"},
    ]})  # fmt: skip

    code, said = check(project, "--strict")

    assert code == 1
    assert "hooks/guard.py: no such file" in said
    assert "under onError: warn every preToolCall goes on unchecked" in said


def test_matchers_are_shown_as_written(project: Project) -> None:
    project.write_agent("scripted:s.yaml", hooks={"PreToolUse": [
        {"command": "true", "format": "claude", "matcher": "Bash|Write"},
    ]})  # fmt: skip

    code, said = check(project)

    assert code == 0, said
    assert "matcher 'Bash|Write'" in said
    assert "(?:" not in said
    assert "\\Z" not in said


@pytest.mark.parametrize(("matcher", "meant"), [("^shel$", "shell"), ("read_fle", "read_file")])
def test_a_matcher_that_matches_no_tool_says_which_it_likely_meant(
    project: Project, matcher: str, meant: str
) -> None:
    project.write_agent("scripted:s.yaml", hooks={"preToolCall": [
        {"command": "true", "matcher": matcher},
    ]})  # fmt: skip

    code, said = check(project)

    assert code == 0, said
    assert "matches no tool this agent offers" in said
    assert f"did you mean {meant!r}?" in said


def test_on_session_start_suggests_hookgates_spelling_first(project: Project) -> None:
    project.write_agent("scripted:s.yaml", hooks={"onSessionStart": [{"command": "true"}]})

    code, said = check(project)

    assert code == 1
    assert "did you mean 'sessionStart'?" in said


def test_print_mode_without_an_agent_file_says_hookgate_init(project: Project) -> None:
    done = project.hookgate("-p", "hi", trusted=False)

    assert done.returncode == 1
    assert "hookgate.yaml: no such file" in done.stderr
    assert "hookgate init" in done.stderr
