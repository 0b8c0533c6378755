"""What hookgate's hooks run stays out of the model's reach, made later or asked for.

A folder a hook runs programs from may not be there yet when the session starts (a
`PATH` entry's `bin/` before a build, a `node_modules/.bin` before `npm install`): no
mount can keep what is not there, so one a command makes is set aside when the command
ends, as a `.git` it makes is. And an asked agent's commands are held to what its asker
keeps from its own model: the asker's hooks run what the child's commands would write.
Each case is a real `hookgate -p` under `yolo: true`, whose payload would write outside
the workspace, where no sandboxed command can.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookgate.tools.sandbox import probe
from runtime.project import Project

SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    directory = tmp_path / "project"
    directory.mkdir()
    (tmp_path / "outside").mkdir()
    return Project(directory, tmp_path / "home")


def shell(*commands: str) -> list[dict[str, Any]]:
    """One reply per shell command, then the answer."""
    calls = [{"tool_calls": [{"name": "shell", "arguments": {"command": c}}]} for c in commands]
    return [*calls, {"text": "done"}]


def results(project: Project) -> list[str]:
    return [
        str(record["message"]["content"])
        for path in project.session_files()
        for record in project.records(path)
        if record.get("type") == "message" and record["message"]["role"] == "tool"
    ]


def planted(program: str, pwned: Path) -> str:
    """A command that makes `bin/<program>`, which writes `pwned` when it runs."""
    return (
        f"mkdir -p bin && printf '#!/bin/sh\\ntouch {pwned}\\n' > bin/{program} && "
        f"chmod +x bin/{program}"
    )


def test_a_path_folder_a_command_makes_in_the_workspace_is_set_aside(project: Project) -> None:
    """`PATH` names `bin/` of the project, not there yet: the hook's `cat` would be the
    model's the moment a command made it."""
    pwned = project.dir.parent / "outside" / "pwned"
    hook = project.hook("guard.sh", "cat > /dev/null\nexit 0")
    project.write_agent(
        project.script(*shell(planted("cat", pwned), "echo after")),
        yolo=True,
        hooks={"preToolCall": [{"matcher": "^shell$", "command": hook}]},
    )
    env = project.env(PATH=f"{project.dir}/bin{os.pathsep}{os.environ['PATH']}")

    done = project.hookgate("-p", "go", env=env)

    assert done.returncode == 0, done.stderr
    made, after = results(project)
    assert "set aside bin, which this command made" in made
    assert after == "after"
    assert not (project.dir / "bin").exists()
    assert not pwned.exists()


def test_control_unconfined_the_hook_runs_the_program_the_model_made(project: Project) -> None:
    pwned = project.dir.parent / "outside" / "pwned"
    hook = project.hook("guard.sh", "cat > /dev/null\nexit 0")
    project.write_agent(
        project.script(*shell(planted("cat", pwned), "echo after")),
        yolo=True,
        hooks={"preToolCall": [{"matcher": "^shell$", "command": hook}]},
        sandbox={"mode": "off"},
    )
    env = project.env(PATH=f"{project.dir}/bin{os.pathsep}{os.environ['PATH']}")

    done = project.hookgate("-p", "go", env=env)

    assert done.returncode == 0, done.stderr
    assert pwned.exists()


def test_an_asked_agent_finds_no_bubblewrap_the_model_made(project: Project) -> None:
    """An asked agent looks up `bwrap` anew; one the model made first on `PATH` would
    run unconfined and confine nothing."""
    pwned = project.dir.parent / "outside" / "pwned"
    escape = project.dir.parent / "outside" / "written-by-child"
    helper = project.dir / "helper"
    helper.mkdir()
    (helper / "script.yaml").write_text(json.dumps(shell(f"echo child > {escape}")))
    (helper / "hookgate.yaml").write_text(
        json.dumps({"model": "scripted:script.yaml", "yolo": True})
    )
    ask = {
        "tool_calls": [{"name": "ask_agent", "arguments": {"agent": "helper", "question": "go"}}]
    }
    project.write_agent(
        project.script(*shell(planted("bwrap", pwned))[:-1], ask, {"text": "done"}),
        yolo=True,
        agents={"helper": {"file": "helper/hookgate.yaml"}},
    )
    env = project.env(PATH=f"{project.dir}/bin{os.pathsep}{os.environ['PATH']}")

    done = project.hookgate("-p", "go", env=env)

    assert done.returncode == 0, done.stderr
    assert not pwned.exists()
    assert not escape.exists()
    assert any("set aside bin, which this command made" in r for r in results(project))


@pytest.mark.parametrize(
    ("target", "write"),
    [
        ("the environment its hook runs from", f"echo 'import os' > .venv/{SITE}/zz.pth"),
        ("its hook", "echo 'exit 0' >> hooks/guard.py"),
    ],
)
def test_an_asked_agent_cannot_write_what_its_askers_hooks_run(
    project: Project, target: str, write: str
) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project.dir / ".venv")],
                   check=True)  # fmt: skip
    (project.dir / "hooks").mkdir()
    (project.dir / "hooks" / "guard.py").write_text("import json, sys\njson.load(sys.stdin)\n")
    before = {path: path.read_bytes() for path in (project.dir / "hooks").iterdir()}
    helper = project.dir / "helper"
    helper.mkdir()
    (helper / "script.yaml").write_text(json.dumps(shell(write)))
    (helper / "hookgate.yaml").write_text(
        json.dumps({"model": "scripted:script.yaml", "yolo": True})
    )
    ask = {
        "tool_calls": [{"name": "ask_agent", "arguments": {"agent": "helper", "question": "go"}}]
    }
    project.write_agent(
        project.script(ask, {"text": "done"}),
        yolo=True,
        agents={"helper": {"file": "helper/hookgate.yaml"}},
        hooks={
            "preToolCall": [{"matcher": "^shell$", "command": ".venv/bin/python hooks/guard.py"}]
        },
    )

    done = project.hookgate("-p", "go")

    assert done.returncode == 0, done.stderr
    assert not (project.dir / ".venv" / SITE / "zz.pth").exists()
    assert {path: path.read_bytes() for path in (project.dir / "hooks").iterdir()} == before
    assert any("Read-only file system" in result for result in results(project)), results(project)


def test_bubblewrap_is_never_taken_from_a_relative_path_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty `PATH` entry is the working directory: the project, the model's."""
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{os.pathsep}.{os.pathsep}{os.environ['PATH']}")

    found = probe._which("bwrap")

    assert found is not None
    assert os.path.isabs(found)
    assert Path(found).resolve() != fake.resolve()


@pytest.mark.parametrize("entry", [".", "", "@P@"], ids=["dot", "empty", "the project"])
def test_a_hook_finds_no_program_in_the_project_by_name(project: Project, entry: str) -> None:
    """A `PATH` entry that is the working directory, or the project by name: the hook's
    `cat` would be a program the model made there."""
    pwned = project.dir.parent / "outside" / "pwned"
    hook = project.hook("guard.sh", "cat > /dev/null\nexit 0")
    plant = f"printf '#!/bin/sh\\ntouch {pwned}\\n' > cat && chmod +x cat"
    project.write_agent(
        project.script(*shell(plant, "echo after")),
        yolo=True,
        hooks={"preToolCall": [{"matcher": "^shell$", "command": hook}]},
    )
    entry = entry.replace("@P@", str(project.dir))
    env = project.env(PATH=f"{entry}{os.pathsep}{os.environ['PATH']}")

    done = project.hookgate("-p", "go", env=env)

    assert done.returncode == 0, done.stderr
    assert results(project)[-1] == "after"
    assert (project.dir / "cat").exists()
    assert not pwned.exists()
