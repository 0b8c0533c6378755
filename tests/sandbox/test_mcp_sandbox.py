"""An MCP stdio server with `sandbox: true` runs within the session's boundaries.

Off by default (servers are the operator's programs); on, the server's own writes
outside the workspace fail the way the shell's do. The test server's `record` tool
appends to the file `$MCP_TEST_LOG` names.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime.project import Project
from support.mcp_peers import stdio_server


@pytest.fixture
def project(tmp_path: Path) -> Project:
    directory = tmp_path / "project"
    directory.mkdir()
    return Project(directory, tmp_path / "home")


def record(project: Project, log: Path, **settings: object) -> str:
    """`hookgate -p` where the model calls the server's `record`; the tool's result."""
    model = project.script(
        {"tool_calls": [{"name": "mcp__test__record", "arguments": {"text": "hello"}}]},
        {"text": "done"},
    )
    server = stdio_server(env={"MCP_TEST_LOG": str(log)}, **settings)
    project.write_agent(model, yolo=True, mcp_servers={"test": server})
    done = project.hookgate("-p", "record")
    assert done.stdout.strip() == "done", done.stderr
    (result,) = [m["content"] for m in project.messages() if m["role"] == "tool"]
    return str(result)


@pytest.mark.parametrize("sandbox", [True, False])
def test_a_server_writes_outside_the_workspace_only_unconfined(
    project: Project, tmp_path: Path, sandbox: bool
) -> None:
    outside = tmp_path / "outside.log"

    result = record(project, outside, sandbox=sandbox)

    assert outside.exists() is not sandbox
    assert ("recorded: hello" in result) is not sandbox


def test_a_confined_server_still_writes_in_the_workspace(project: Project) -> None:
    inside = project.dir / "inside.log"

    assert "recorded: hello" in record(project, inside, sandbox=True)
    assert inside.read_text() == "hello\n"


def test_sandbox_must_be_true_or_false(project: Project) -> None:
    project.write_agent("scripted:x.yaml", mcp_servers={"test": {"command": "x", "sandbox": "on"}})

    done = project.hookgate("-p", "hi")

    assert done.returncode == 1
    assert (
        "hookgate.yaml:6: mcp_servers.test.sandbox: expected true or false, got a string 'on'"
        in (done.stderr)
    )
    assert json.loads(project.agent_file.read_text())["mcp_servers"]["test"]["sandbox"] == "on"


@pytest.mark.parametrize("name", ["lefthook.yml", ".pre-commit-config.yaml"])
def test_what_a_confined_server_makes_that_runs_outside_is_set_aside(
    project: Project, name: str
) -> None:
    """A mount keeps only what is there: a file the model has the server make, which git's
    hook managers run at the next commit, is set aside once the call has ended."""
    made = project.dir / name

    result = record(project, made, sandbox=True)

    assert not made.exists()
    (aside,) = project.dir.glob(f"{name}.hookgate-set-aside-*")
    assert aside.read_text() == "hello\n"
    assert f"hookgate set aside {name}, which this call made" in result
    assert aside.name in result


def test_control_what_an_unconfined_server_makes_stays(project: Project) -> None:
    made = project.dir / "lefthook.yml"

    result = record(project, made, sandbox=False)

    assert made.read_text() == "hello\n"
    assert "set aside" not in result
