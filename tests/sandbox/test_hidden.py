"""`sandbox.hidden`: what neither a confined command nor a file tool reads.

By default, the usual stores of the user's credentials: a prompt-injected model read
`~/.ssh/id_ed25519` or `~/.aws/credentials` with `cat`, and reached the sockets of
SSH's shared connections in `~/.ssh` (through which `ssh` runs commands on the user's
servers with no network of its own). Each case runs a real `hookgate -p` with a
scripted model under `yolo: true` and a home of the test's own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookgate.tools.sandbox.settings import DEFAULT_HIDDEN, SandboxSettings
from runtime.project import Project

KEY = "PRIVATE-KEY-3f9a"
NETRC = "NETRC-PASSWORD-77c1"
AWS = "AWS-SECRET-0b2e"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    directory = tmp_path / "project"
    directory.mkdir()
    return Project(directory, tmp_path / "hookgate-home")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home with an SSH key, a netrc and AWS credentials."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(KEY)
    (home / ".netrc").write_text(f"machine example.com password {NETRC}\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"aws_secret_access_key = {AWS}\n")
    return home


def run(project: Project, home: Path, *calls: dict[str, Any], **settings: Any) -> list[str]:
    """`hookgate -p` with `home` as HOME, the model making `calls`; the tool results."""
    replies = [{"tool_calls": [call]} for call in calls]
    project.write_agent(project.script(*replies, {"text": "done"}), yolo=True, **settings)
    done = project.hookgate("-p", "go", env=project.env(HOME=str(home)))
    assert done.returncode == 0, done.stderr
    return [str(m["content"]) for m in project.messages() if m["role"] == "tool"]


def shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


READ_THEM = "cat ~/.ssh/id_ed25519; cat ~/.netrc; cat ~/.aws/credentials; echo end"


def test_a_command_reads_none_of_the_users_credentials_by_default(
    project: Project, home: Path
) -> None:
    (result,) = run(project, home, shell(READ_THEM))

    assert result.splitlines()[0] == "end"  # its output; then what it said on stderr
    assert "id_ed25519: No such file or directory" in result
    assert ".netrc: Permission denied" in result  # a hidden file: a device no one opens
    assert "credentials: No such file or directory" in result
    for secret in (KEY, NETRC, AWS):
        assert secret not in result
    assert (home / ".ssh" / "id_ed25519").read_text() == KEY  # hidden, not harmed


def test_control_with_nothing_hidden_a_command_reads_them(project: Project, home: Path) -> None:
    (result,) = run(project, home, shell(READ_THEM), sandbox={"hidden": []})

    for secret in (KEY, NETRC, AWS):
        assert secret in result


def test_a_file_tool_reads_no_hidden_file(project: Project, home: Path) -> None:
    read = {"name": "read_file", "arguments": {"path": str(home / ".ssh" / "id_ed25519")}}
    listing = {"name": "list_files", "arguments": {"path": str(home / ".ssh")}}

    read_result, list_result = run(project, home, read, listing)

    assert read_result.startswith("[denied: ")
    assert "is hidden from the model (sandbox.hidden" in read_result
    assert KEY not in read_result
    assert "is hidden from the model" in list_result
    assert "id_ed25519" not in list_result


def test_a_projects_own_secret_can_be_hidden(project: Project, home: Path) -> None:
    """`hidden: [.env]` (relative to the agent file): the file tools refuse it, a
    command cannot open, remove or replace it."""
    env = project.dir / ".env"
    env.write_text("API_TOKEN=project-token-51d0\n")
    read = {"name": "read_file", "arguments": {"path": ".env"}}
    write = {"name": "write_file", "arguments": {"path": ".env", "content": "x"}}

    cat, tampering, read_result, write_result = run(
        project, home, shell("cat .env; echo end"), shell("rm -f .env || mv .env x"),
        read, write, sandbox={"hidden": [".env"]},
    )  # fmt: skip

    assert cat.splitlines()[0] == "end"
    assert ".env: Permission denied" in cat
    assert "Device or resource busy" in tampering
    assert "is hidden from the model" in read_result
    assert "is hidden from the model" in write_result
    assert env.read_text() == "API_TOKEN=project-token-51d0\n"


def test_the_trust_summary_says_what_hidden_no_longer_hides(project: Project) -> None:
    project.write_agent("scripted:s.yaml", sandbox={"hidden": [".env"]})

    done = project.hookgate("trust", trusted=False)

    ssh = Path("~/.ssh").expanduser().resolve()
    assert f"the model's commands and file tools may read {ssh}," in done.stderr
    assert "hidden by default: your credentials (sandbox.hidden)" in done.stderr


def test_the_default_is_said_by_hooks_check(project: Project) -> None:
    project.write_agent("scripted:s.yaml")

    done = project.hookgate("hooks", "check", trusted=False)

    ssh = Path("~/.ssh").expanduser().resolve()
    assert f"hidden from commands and file tools: {ssh}, " in done.stdout


@pytest.mark.parametrize(
    ("hidden", "said"),
    [
        ("~/.ssh", "sandbox.hidden: expected a list of paths, got a string '~/.ssh'"),
        ([3], "sandbox.hidden[0]: expected a path, got a number 3"),
        (["."], "sandbox.hidden[0]: '.' holds"),
    ],
    ids=["not a list", "not a path", "the project itself"],
)
def test_a_hidden_mistake_names_file_line_key_and_value(
    project: Project, hidden: object, said: str
) -> None:
    project.write_agent("scripted:s.yaml", sandbox={"hidden": hidden})

    done = project.hookgate("-p", "hi")

    assert done.returncode != 0
    assert f"{project.agent_file}:" in done.stderr
    assert said in done.stderr


def test_an_asked_agent_hides_what_its_asker_hides_and_its_own() -> None:
    asker = SandboxSettings(hidden=(Path("/secrets"),))
    asked = SandboxSettings()

    held = SandboxSettings.from_json(json.loads(json.dumps(asker.to_json())))

    assert set(asked.within(held).hidden_paths()) == {
        Path("/secrets"),
        *SandboxSettings().hidden_paths(),
    }
    assert len(DEFAULT_HIDDEN) == len(SandboxSettings().hidden_paths())
