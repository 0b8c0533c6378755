"""Permission rules through `hookgate -p`, a real process: the scripted model plays a
hostile model and the real shell tool runs whatever the rules let through, so each
test reads the verdict off the files left in the project.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hookgate.runtime.toolcall import NOT_ASKED_RESULT
from runtime.project import Project


def shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def tool_answers(project: Project) -> list[str]:
    return [m["content"] for m in project.messages() if m["role"] == "tool"]


def run_print(project: Project, command: str, **settings: Any) -> tuple[list[str], str]:
    """`hookgate -p` on a model that runs `command`; the tool's answers and stderr."""
    model = project.script({"tool_calls": [shell(command)]}, {"text": "Done."})
    project.write_agent(model, **settings)
    result = project.hookgate("-p", "Tidy up")
    assert result.returncode == 0, result.stderr
    return tool_answers(project), result.stderr


@pytest.mark.parametrize(
    ("allow", "command"),
    [
        ("shell(printf *)", "printf -v 'a[$(touch pwned)]' 1"),
        ("shell(test *)", "test -v 'a[$(touch pwned)]'"),
        ("shell(read *)", "read 'a[$(touch pwned)]' <<< 1"),
        ("shell(echo *)", "echo hi >& pwned"),
        ("shell(echo *)", "echo hi &> pwned"),
        ("shell(declare *)", "declare 'a[$(touch pwned)]=1'"),
        ("shell(ls *)", "ls $(touch pwned)"),
    ],
)
def test_an_allow_rule_does_not_cover_a_command_that_runs_hidden_code(
    project: Project, allow: str, command: str
) -> None:
    answers, stderr = run_print(project, command, permissions={"allow": [allow]})

    assert answers == [NOT_ASKED_RESULT]  # it fell through to consent: -p says no
    assert not (project.dir / "pwned").exists()
    # The user learns why the rule did not cover it.
    assert "this command builds part of itself at run time" in stderr or (
        "writes to a file through a redirect" in stderr
    )


def test_an_allow_rule_still_covers_ordinary_commands(project: Project) -> None:
    (project.dir / "src").mkdir()
    (project.dir / "src" / "kept.txt").touch()
    answers, _ = run_print(project, "ls -la src", permissions={"allow": ["shell(ls *)"]})
    assert "kept.txt" in answers[0]


@pytest.mark.parametrize(
    "command",
    [
        "/bin/r? -f x",
        "{rm,-f,x}",
        "bash <<< 'rm -f x'",
        "bash <<EOF\nrm -f x\nEOF",
        "echo 'rm -f x' | bash",
        "source /dev/stdin <<< 'rm -f x'",
        "r$()m -f x",
        "script -qc 'rm -f x' /dev/null",
        "printf 'rm -f x' > s.sh; bash s.sh",
        "trap 'rm -f x' EXIT",
        "let 'a[$(rm -f x)]'",
    ],
)
def test_a_deny_rule_fires_on_what_it_cannot_read_under_yolo(
    project: Project, command: str
) -> None:
    (project.dir / "x").touch()
    answers, _ = run_print(project, command, yolo=True, permissions={"deny": ["shell(rm *)"]})

    assert (project.dir / "x").exists()
    (answer,) = answers
    assert answer.startswith("[denied by the permission rule 'shell(rm *)'")


def test_a_denial_for_what_the_rule_cannot_read_names_the_construct(project: Project) -> None:
    (project.dir / "x").touch()
    answers, _ = run_print(
        project, "echo 'rm -f x' | bash", yolo=True, permissions={"deny": ["shell(sudo *)"]}
    )
    assert answers == [
        "[denied by the permission rule 'shell(sudo *)': bash reads the commands it runs "
        "from a pipe, which no rule can read]"
    ]
    assert (project.dir / "x").exists()


def test_the_session_record_keeps_the_denial(project: Project) -> None:
    (project.dir / "x").touch()
    run_print(project, "bash <<< 'rm -f x'", yolo=True, permissions={"deny": ["shell(rm *)"]})
    recorded = json.dumps(project.records())
    assert "denied by the permission rule" in recorded


@pytest.mark.parametrize(
    ("deny", "command"),
    [
        ("read_file(secrets/*)", "cat < secrets/key"),
        ("write_file(notes/*)", "echo pwned > notes/a"),
        ("edit_file(notes/*)", "echo pwned >& ./notes/a"),
    ],
)
def test_a_path_deny_rule_judges_the_files_a_shell_redirect_opens(
    project: Project, deny: str, command: str
) -> None:
    (project.dir / "secrets").mkdir()
    (project.dir / "secrets" / "key").write_text("s3cret")
    (project.dir / "notes").mkdir()

    answers, _ = run_print(project, command, yolo=True, permissions={"deny": [deny]})

    (answer,) = answers
    assert answer.startswith(f"[denied by the permission rule {deny!r}: it ")
    assert "s3cret" not in answer
    assert not (project.dir / "notes" / "a").exists()


@pytest.mark.parametrize(
    "command",
    [
        'cat <<E"O"F\nhi\nEOF\nrm -f x\nE"O"F',  # the here-doc ends at EOF for bash
        "BASH_CMDS[ls]=/bin/rm; ls -f x",
        "shopt -s expand_aliases\nalias echo=\necho rm -f x",
        "x='$(rm -f x)'; echo ${x@P}",
        "echo ${x:-`rm -f x`}",
        "let 'a[x[0]+$(rm -f x)]'",
        "x=$(printf 'a\\x5b$(rm -f x)]'); echo $((x))",
        "timeout --signal KILL 5 bash -c 'true; rm -f x'",
        "$'rm\\0zz' -f x",
        "printf -v PS4 %s '$(rm -f x)'; set -x; :",
    ],
)
def test_a_deny_rule_fires_where_bash_reads_the_line_otherwise_than_it_looks(
    project: Project, command: str
) -> None:
    (project.dir / "x").touch()
    answers, _ = run_print(project, command, yolo=True, permissions={"deny": ["shell(rm *)"]})

    (answer,) = answers
    assert answer.startswith("[denied by the permission rule 'shell(rm *)'"), answer
    assert (project.dir / "x").exists()


@pytest.mark.parametrize(
    ("allow", "command"),
    [
        ("shell(cat*)", 'cat <<E"O"F\nhi\nEOF\ntouch pwned\nE"O"F'),
        ("shell(printf *)", "printf -v 'a[x[0]+$(touch pwned)]' 1"),
        ("shell(declare *)", "declare $'a\\x5b$(touch pwned)]=1'"),
    ],
)
def test_an_allow_rule_does_not_cover_what_bash_reads_otherwise(
    project: Project, allow: str, command: str
) -> None:
    answers, _ = run_print(project, command, permissions={"allow": [allow]})

    assert answers == [NOT_ASKED_RESULT]
    assert not (project.dir / "pwned").exists()
