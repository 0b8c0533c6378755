"""`what_hook_runs` names the files a hook's configuration makes run, reading alone.

The trust tests run these through `hookgate trust` and `-p`; here the forms beyond
those, each against the file it must name (or the word it cannot read).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import EVENTS
from hookgate.hooks.config import parse_hook
from hookgate.hooks.files.yamlfile import Where
from hookgate.hooks.runs.whatruns import what_hook_runs

FILES = ("x.sh", "sub/g.sh", "hooks/guard", "lib/a.py", "pkg/__init__.py", "pkg/mod.py",
         "f.jq", ".x", "data.txt")  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in FILES:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n")
    return tmp_path


def runs(project: Path, **entry: Any) -> tuple[list[str], list[str]]:
    hook = parse_hook(
        entry, EVENTS["preToolCall"], Where("h.yaml"), base_dir=project, import_python=False
    )
    found = what_hook_runs(hook, project)
    return [str(p.relative_to(project)) for p in found.files], list(found.unread)


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("bash -o pipefail hooks/guard", ["hooks", "hooks/guard"]),
        ("env BASH_ENV=./.x bash -c true", [".x"]),
        ("timeout 5 sh hooks/guard", ["hooks", "hooks/guard"]),
        ("nice -n 5 ./x.sh", ["x.sh"]),
        ('sh -c "cd sub; sh ./g.sh"', ["sub", "sub/g.sh"]),
        ('cd "$CLAUDE_PROJECT_DIR" && sh hooks/guard', ["hooks", "hooks/guard"]),
        ("${CLAUDE_PROJECT_DIR}/x.sh --fast", ["x.sh"]),
        (
            "python3 -m pkg.mod",
            ["pkg", "pkg/__init__.py", "pkg/mod.py", "(modules shadowing Python's)"],
        ),
        ("jq -f f.jq", ["f.jq"]),
        (". ./lib/a.py && true", ["lib", "lib/a.py"]),
        ("./x.sh >> data.txt; cat data.txt | tee -a data.txt", ["x.sh"]),
        ("echo $(sh hooks/guard)", ["hooks", "hooks/guard"]),
    ],
)
def test_the_files_a_command_line_runs(project: Path, command: str, files: list[str]) -> None:
    found, unread = runs(project, command=command)
    assert sorted(found) == sorted(files)
    assert "data.txt" not in found  # a log, read or written, is no program
    assert unread == []


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("make guard", ["Makefile", "hooks", "hooks/guard"]),
        # `.npmrc`, absent: one that appears would load code into the task
        ("npm run --silent guard", [".npmrc", "hooks", "hooks/guard", "package.json"]),
        ("cd sub && make -s guard",
         ["Makefile", "sub", "sub/g.sh", "sub/hooks/guard", "sub/makefile"]),
        ("just guard", []),  # no justfile here: nothing it would read
    ],
)  # fmt: skip
def test_a_task_runner_pins_the_file_it_reads_its_tasks_from_and_what_the_task_runs(
    project: Path, command: str, files: list[str]
) -> None:
    for name in ("Makefile", "sub/makefile"):
        (project / name).write_text("guard:\n\t./hooks/guard\n")
    (project / "package.json").write_text('{"scripts": {"guard": "./hooks/guard"}}')
    found, unread = runs(project, command=command)
    assert sorted(found) == files
    assert unread == []


@pytest.mark.parametrize(
    ("command", "unread"),
    [
        ("$TOOLS/guard.sh", ["$TOOLS/guard.sh"]),
        ("bash $SCRIPT", ["$SCRIPT"]),
        ("./$(echo x).sh", ["./$(echo x).sh"]),
        ("cd $WHERE && ./x.sh", ["$WHERE"]),
        ('echo "$HOOKGATE_EVENT" && ./x.sh', []),  # an argument, not a path: not a file
    ],
)
def test_words_built_at_run_time_are_named_not_guessed(
    project: Path, command: str, unread: list[str]
) -> None:
    assert runs(project, command=command)[1] == unread


def test_a_packages_every_module_and_where_a_module_could_appear(project: Path) -> None:
    found, _ = runs(project, python="pkg:check")
    assert found == ["pkg.py", "pkg/__init__.py", "pkg", "pkg/mod.py"]


def test_python_m_pins_what_its_modules_import_from_the_directory_it_runs_in(
    project: Path,
) -> None:
    """`python3 -m pkg.mod` puts its directory first on `sys.path`: a `json.py` or
    `json.pyc` appearing there would be the module's `json`."""
    (project / "pkg" / "mod.py").write_text("import json\nimport helper\n")
    (project / "helper.py").write_text("import sys\n")
    found, unread = runs(project, command="python3 -m pkg.mod")
    assert {"pkg", "pkg/__init__.py", "pkg/mod.py", "helper.py", "json.py", "json.pyc"} <= set(
        found
    )
    assert "sys.py" not in found  # a built-in module: no file can stand in for it
    assert unread == []


def test_env_pins_a_python_path_directorys_files_and_other_keys_scripts(project: Path) -> None:
    env = {"PYTHONPATH": "lib", "GUARD": "./x.sh", "AUDIT_LOG": "data.txt"}
    found, _ = runs(project, command="true", env=env)
    assert found == ["lib", "lib/a.py", "x.sh"]  # the log a hook appends to would untrust it


def test_args_are_literal_no_shell_expands_them(project: Path) -> None:
    (project / "$x.sh").write_text("\n")
    assert runs(project, args=["./$x.sh"]) == (["$x.sh"], [])


def test_a_shells_line_given_as_args_is_read_too(project: Path) -> None:
    found, _ = runs(project, args=["sh", "-c", "cd sub && ./g.sh"])
    assert sorted(found) == ["sub", "sub/g.sh"]


def test_a_path_entry_outside_the_project_is_not_pinned_file_by_file(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("machine-bin")
    (elsewhere / "tool").write_text("\n")
    found, _ = runs(project, command="true", env={"PATH": f"./hooks:{elsewhere}"})
    assert found == ["hooks", "hooks/guard"]


@pytest.mark.parametrize(
    ("command", "loads"),
    [('"$CLAUDE_PROJECT_DIR"/x.sh --fast', False), ("${PWD}/x.sh", False),
     ("./x.sh && true", True), ('"$HOME"/x.sh', True)],
)  # fmt: skip
def test_the_bash_parser_loads_only_for_a_line_that_needs_it(
    project: Path, command: str, loads: bool
) -> None:
    """`hookgate hook` starts a process per event: Claude's idiom must not load the
    grammar there (tens of milliseconds), nor may it be read less well for that; nor
    may the usual script it runs, which names no other file."""
    (project / "x.sh").write_text(
        "#!/bin/bash\n# Blocks rm: `python3 x.py` is fine.\n"
        "command=$(jq -r '.tool_input.command' 2>/dev/null)\n"
        'if echo "$command" | grep -q rm; then echo "no rm" >&2; exit 2; fi\n'
    )
    code = (
        "import sys; from pathlib import Path; from hookgate.hooks import EVENTS;"
        "from hookgate.hooks.config import parse_hook; from hookgate.hooks.files.yamlfile import Where;"
        "from hookgate.hooks.runs.whatruns import what_hook_runs;"
        f"h = parse_hook({{'command': {command!r}}}, EVENTS['preToolCall'], Where('h'),"
        f" base_dir=Path({str(project)!r}));"
        f"print([str(p) for p in what_hook_runs(h, Path({str(project)!r})).files],"
        " 'tree_sitter' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    files, loaded = done.stdout.rsplit(" ", 1)
    assert loaded.strip() == str(loads)
    if "x.sh" in command and "HOME" not in command:
        assert str(project / "x.sh") in files
