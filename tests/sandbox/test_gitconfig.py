"""What git's configuration names in a tree, read as git itself reads it.

Each value is written by the real `git config` (which quotes and escapes it) and read
back by `named_by_git`: the folder it names must be the one git runs hooks from.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hookgate.tools.sandbox.gitconfig import named_by_git

#: Names git keeps as written: printable, no NUL or line break, no `~` first (the home).
NAMES = st.text(
    st.characters(min_codepoint=32, max_codepoint=0x2FF, exclude_characters="/"),
    min_size=1,
    max_size=20,
).filter(lambda name: name.strip() not in ("", ".", "..") and not name.startswith("~"))


def _repository(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fresh repository, with the user's and the system's configuration out of play."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    tree = Path(os.path.realpath(tmp_path)) / "tree"
    subprocess.run(["git", "init", "-q", str(tree)], check=True, env=env)
    return tree, env


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=NAMES)
@example(name='a "quoted" #not-a-comment ;either')
@example(name="back\\slash\\ and trailing space ")
@example(name=" leading\ttab")
def test_the_hooks_folder_is_the_one_git_runs_hooks_from(tmp_path: Path, name: str) -> None:
    tree, env = _repository(tmp_path / os.urandom(4).hex())
    subprocess.run(["git", "-C", str(tree), "config", "core.hooksPath", f"hooks/{name}"],
                   check=True, env=env)  # fmt: skip
    read_by_git = subprocess.run(
        ["git", "-C", str(tree), "config", "--get", "core.hooksPath"],
        check=True, env=env, capture_output=True, text=True,
    ).stdout.removesuffix("\n")  # fmt: skip

    assert named_by_git((tree,), env) == [Path(os.path.normpath(tree / read_by_git))]


def test_a_folder_below_the_tree_is_read_in_the_trees_repository(tmp_path: Path) -> None:
    tree, env = _repository(tmp_path)
    subprocess.run(["git", "-C", str(tree), "config", "core.hooksPath", ".githooks"],
                   check=True, env=env)  # fmt: skip

    assert named_by_git((tree / "a" / "b",), env) == [tree / ".githooks"]


def test_a_worktree_reads_the_repositorys_configuration(tmp_path: Path) -> None:
    """A linked worktree's `.git` is a file naming its gitdir, whose `commondir` holds
    the configuration; a relative hooks folder is taken in the worktree's own tree."""
    tree, env = _repository(tmp_path)
    git = ["git", "-C", str(tree), "-c", "user.name=u", "-c", "user.email=u@x"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "one"], check=True, env=env)
    subprocess.run([*git, "worktree", "add", "-q", str(tmp_path / "other")], check=True, env=env)
    subprocess.run([*git, "config", "core.hooksPath", ".githooks"], check=True, env=env)

    assert named_by_git((tmp_path / "other",), env) == [tmp_path / "other" / ".githooks"]


def test_included_files_are_followed_and_named_even_where_they_include_themselves(
    tmp_path: Path,
) -> None:
    tree, env = _repository(tmp_path)
    subprocess.run(["git", "-C", str(tree), "config", "include.path", "../shared.inc"],
                   check=True, env=env)  # fmt: skip
    (tree / "shared.inc").write_text(
        "[include]\n\tpath = shared.inc\n"
        '[alias]\n\tx = "!./tools/x.sh" --flag ; a comment\n'
        "[core]\n\tpager = less\n\teditor = \\\n  bin/edit\n"
    )

    assert named_by_git((tree,), env) == [
        tree / "shared.inc",
        tree / "tools/x.sh",
        tree / "bin/edit",
    ]


def test_no_repository_names_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

    assert named_by_git((Path(os.path.realpath(tmp_path)),), env) == []
