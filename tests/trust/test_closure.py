"""The closure: a `python:` hook's module next to the agent file is part of it, is
imported from there only (under a private name), and may not appear later unseen."""

from __future__ import annotations

import json
import os
import sys

import pytest

from hookgate.security.trust.check import Untrusted, require_trust
from hookgate.security.trust.record import trust_agent_file
from hookgate.security.trust.store import TrustStore
from runtime.conftest import OpenAgent
from runtime.project import Project

pytestmark = pytest.mark.anyio

LOCAL = "def check(payload):\n    return {'context': 'the local json.py'}\n"


async def test_a_local_module_is_imported_from_the_agent_files_directory_only(
    project: Project, open_project_agent: OpenAgent
) -> None:
    (project.dir / "json.py").write_text(LOCAL)
    project.write_agent(
        project.script({"text": "x"}), hooks={"preGeneration": [{"python": "json:check"}]}
    )
    agent = await open_project_agent()

    (hook,) = agent.engine.hooks_for("preGeneration")
    assert hook.function is not None
    assert hook.function({}) == {"context": "the local json.py"}
    assert hook.function.__module__.startswith("_hookgate_local_")
    assert sys.modules["json"] is json  # the standard library's, still


@pytest.mark.parametrize("change", ["edit", "appear"])
def test_a_hook_module_edited_or_appearing_next_to_the_file_untrusts_it(
    project: Project, change: str
) -> None:
    store = TrustStore(project.home)
    (project.dir / "guard.py").write_text(LOCAL)
    project.write_agent("scripted:s.yaml", hooks={"preGeneration": [{"python": "guard:check"}]})
    trust_agent_file(project.agent_file, store=store)
    require_trust(project.agent_file, store=store)

    if change == "edit":
        (project.dir / "guard.py").write_text(LOCAL + "# more\n")
        expected = f"python hook module {project.dir / 'guard.py'} changed"
    else:
        (project.dir / "guard").mkdir()
        (project.dir / "guard" / "__init__.py").write_text(LOCAL)
        expected = f"new python hook module {project.dir / 'guard' / '__init__.py'}"
    with pytest.raises(Untrusted, match=expected):
        require_trust(project.agent_file, store=store)


def test_a_damaged_store_is_a_config_error_with_the_way_out(project: Project) -> None:
    project.write_agent("scripted:s.yaml")
    project.home.mkdir()
    (project.home / "trust.json").write_text(json.dumps({"version": 99}))

    done = project.hookgate("-p", "hi", trusted=False)

    assert done.returncode == 1
    assert "the trust store is damaged" in done.stderr
    assert f"rm {project.home / 'trust.json'}" in done.stderr


@pytest.mark.parametrize("planted", ["a named pipe", "a directory"])
def test_no_file_where_a_script_should_be_hangs_or_breaks_nothing(
    project: Project, planted: str
) -> None:
    """A pipe would block the hashing read; a directory made it raise (a traceback).
    Either is trusted as what it is: a script put in its place later is a change."""
    guard = project.dir / "guard.sh"
    if planted == "a named pipe":
        os.mkfifo(guard)
    else:
        guard.mkdir()
    project.write_agent(
        project.script({"text": "hi"}), hooks={"preToolCall": [{"command": "./guard.sh"}]}
    )

    done = project.hookgate("trust", "--yes", trusted=False)

    assert done.returncode == 0, done.stderr
    assert project.hookgate("-p", "hi", trusted=False).returncode == 0
    guard.unlink() if planted == "a named pipe" else guard.rmdir()
    guard.write_text("#!/bin/sh\n")
    done = project.hookgate("-p", "hi", trusted=False)
    assert done.returncode == 1
    assert "is not trusted" in done.stderr
    assert str(guard) in done.stderr


def test_a_log_the_hook_appends_to_is_not_pinned_the_script_it_runs_is(
    project: Project,
) -> None:
    (project.dir / "audit.log").write_text("")
    (project.dir / "notes.txt").write_text("")
    (project.dir / "guard.py").write_text("print('{}')\n")
    audit = {"command": "cat >> audit.log; echo run | tee -a notes.txt >/dev/null"}
    guard = {"command": "python3 guard.py"}
    project.write_agent(
        project.script({"text": "one"}, {"text": "two"}),
        hooks={"sessionStart": [audit], "preToolCall": [guard]},
    )
    project.trust()

    for _ in range(2):  # the first run appends to both logs; the second still starts
        done = project.hookgate("-p", "hi", trusted=False)
        assert done.returncode == 0, done.stderr
    (project.dir / "guard.py").write_text("print('{}')  # changed\n")
    done = project.hookgate("-p", "hi", trusted=False)
    assert f"preToolCall hook script {project.dir / 'guard.py'} changed" in done.stderr


@pytest.mark.parametrize("change", ["edit", "appear", "script"])
def test_claude_settings_files_and_their_scripts_belong_to_the_closure(
    project: Project, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    monkeypatch.setenv("HOME", str(project.home))
    store = TrustStore(project.home)
    settings = project.dir / ".claude" / "settings.json"
    settings.parent.mkdir()
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    (project.dir / "guard.sh").write_text("#!/bin/sh\nexit 0\n")
    project.write_agent("scripted:s.yaml", claude_settings=True)
    trust_agent_file(project.agent_file, store=store)
    require_trust(project.agent_file, store=store)

    local = project.dir / ".claude" / "settings.local.json"
    if change == "edit":
        settings.write_text(json.dumps({"hooks": {}}))
        expected = f"Claude Code settings {settings} changed"
    elif change == "appear":  # a repository adds hooks of its own next to the trusted ones
        local.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
        expected = f"new Claude Code settings {local}"
    else:
        (project.dir / "guard.sh").write_text("#!/bin/sh\nrm -rf ~\n")
        expected = f"preToolCall hook script {project.dir / 'guard.sh'} changed"
    with pytest.raises(Untrusted, match=expected):
        require_trust(project.agent_file, store=store)
