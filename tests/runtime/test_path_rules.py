"""Path rules as a user writes them, through `hookgate -p` with the scripted model.

A rule names a place as the user sees it: `secrets/*` where `secrets` is a symlink to
`vault`, in a project whose directory may be named `proj[1]`. A deny rule refuses the
path as written and the file it reaches; an allow rule covers only the file reached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.toolcall import NOT_ASKED_RESULT
from runtime.project import Project


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def run_print_mode(project: Project, calls: list[dict[str, Any]], **settings: Any) -> list[str]:
    """`hookgate -p` with one model reply making `calls`; the tools' answers, in order."""
    model = project.script({"tool_calls": calls}, {"text": "Done."})
    project.write_agent(model, **settings)
    result = project.hookgate("-p", "go")
    assert result.returncode == 0, result.stderr
    return [m["content"] for m in project.messages() if m["role"] == "tool"]


def denied_by(rule: str) -> str:
    return f"[denied by the permission rule '{rule}']"


@pytest.fixture
def vault(project: Project) -> Path:
    """`vault/key` holding a secret, and `secrets`, a symlink to `vault`."""
    (project.dir / "vault").mkdir()
    (project.dir / "vault" / "key").write_text("s3cret")
    (project.dir / "secrets").symlink_to("vault")
    return project.dir / "vault"


@pytest.mark.parametrize("rule", ["read_file(secrets/*)", "read_file(vault/*)"])
@pytest.mark.parametrize("path", ["secrets/key", "vault/key", "./secrets//key", "secrets"])
def test_a_deny_rule_on_a_symlinked_folder_refuses_both_names_of_it(
    project: Project, vault: Path, rule: str, path: str
) -> None:
    if path == "secrets":  # the folder itself, which a `/*` rule does not name
        rule = rule.replace("/*", "")
    (answer,) = run_print_mode(
        project, [call("read_file", path=path)], permissions={"deny": [rule]}, yolo=True
    )
    assert answer == denied_by(rule)


def test_a_deny_rule_on_a_symlink_to_a_folder_outside_refuses_the_link(project: Project) -> None:
    outside = project.dir.parent / "outside"
    outside.mkdir()
    (outside / "key").write_text("s3cret")
    (project.dir / "secrets").symlink_to(outside)
    rule = "read_file(secrets/**)"
    (answer,) = run_print_mode(
        project, [call("read_file", path="secrets/key")], permissions={"deny": [rule]},
        yolo=True, workspace={"dirs": [str(outside)]},
    )  # fmt: skip
    assert answer == denied_by(rule)


def test_an_allow_rule_covers_the_file_reached_not_the_name_it_was_reached_by(
    project: Project, vault: Path
) -> None:
    (project.dir / "notes").mkdir()
    (project.dir / "other").mkdir()
    (project.dir / "notes" / "key").symlink_to("../other/key")
    answers = run_print_mode(
        project,
        [call("write_file", path="secrets/new", content="a"),
         call("write_file", path="notes/key", content="pwned")],
        permissions={"allow": ["write_file(secrets/*)", "write_file(notes/*)"]},
    )  # fmt: skip
    # secrets/ is vault/, which the rule names; notes/key is other/key, which no rule names.
    assert answers == ["created vault/new (1 bytes)", NOT_ASKED_RESULT]
    assert (vault / "new").read_text() == "a"
    assert not (project.dir / "other" / "key").exists()


def test_an_allow_rule_does_not_cover_a_link_out_of_its_folder(project: Project) -> None:
    outside = project.dir.parent / "outside"
    outside.mkdir()
    (project.dir / "notes").mkdir()
    (project.dir / "notes" / "x").symlink_to(outside / "x")
    (answer,) = run_print_mode(
        project, [call("write_file", path="notes/x", content="pwned")],
        permissions={"allow": ["write_file(notes/*)"]},
    )  # fmt: skip
    assert answer == NOT_ASKED_RESULT
    assert not (outside / "x").exists()


@pytest.fixture
def bracketed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project whose directory's name is a glob: `proj[1]` matches `proj1`, not itself."""
    directory = (tmp_path / "proj[1]").resolve()
    directory.mkdir()
    monkeypatch.chdir(directory)
    return Project(directory, tmp_path / "home")


def test_relative_rules_hold_in_a_project_whose_name_is_a_glob(bracketed: Project) -> None:
    (bracketed.dir / "secret.txt").write_text("s3cret")
    (bracketed.dir / "notes").mkdir()
    answers = run_print_mode(
        bracketed,
        [call("read_file", path="secret.txt"), call("write_file", path="notes/a.txt", content="x")],
        permissions={"deny": ["read_file(secret.txt)"], "allow": ["write_file(notes/*)"]},
    )
    assert answers == [denied_by("read_file(secret.txt)"), "created notes/a.txt (1 bytes)"]


def test_a_rule_does_not_reach_a_sibling_the_project_name_matches_as_a_glob(
    bracketed: Project,
) -> None:
    sibling = bracketed.dir.parent / "proj1"
    sibling.mkdir()
    (sibling / "a.txt").write_text("elsewhere")
    (answer,) = run_print_mode(
        bracketed, [call("write_file", path="../proj1/a.txt", content="pwned")],
        permissions={"allow": ["write_file(*)"]},
    )  # fmt: skip
    assert answer == NOT_ASKED_RESULT
    assert (sibling / "a.txt").read_text() == "elsewhere"
