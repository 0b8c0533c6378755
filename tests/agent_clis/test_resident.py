"""The resident hookgate: `python -m hookgate.agents.relay AGENT` (what `hookgate install
AGENT --resident` writes) answers every event as `hookgate hook AGENT` does, by itself
until the resident it starts answers, trust checked on every event."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent_clis.conftest import GUARD_REASON, bash, claude_event, socket_file, wait_for_resident
from frontends.test_startup_imports import assert_none_of, imported
from hookgate.agents import relay as relay_module
from hookgate.store.home import default_home
from runtime.project import RUN_TIMEOUT, Project

#: The command `hookgate install AGENT --resident` writes, less the agent.
RELAY = [sys.executable, "-S", relay_module.__file__]


def relay(project: Project, stdin: str) -> dict[str, object]:
    done = subprocess.run(
        [*RELAY, "claude"], input=stdin, cwd=project.dir,
        env=project.env(), capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout) if done.stdout.strip() else {}
    return answer


def decisions(project: Project) -> list[dict[str, object]]:
    return [r["data"] for path in project.session_files() for r in project.records(path)
            if r.get("kind") == "agent_hook"]  # fmt: skip


def test_the_relay_answers_then_the_resident_answers_alike(
    project: Project, resident_ended: None
) -> None:
    denied = claude_event(project, "PreToolUse", **bash("rm -rf build"))
    first = relay(project, denied)  # no resident yet: answered by the relay itself
    wait_for_resident(project)
    second, third = relay(project, denied), relay(project, denied)
    for answer in (first, second, third):
        assert GUARD_REASON in json.dumps(answer)
    pids = [d["pid"] for d in decisions(project)]
    assert len(pids) == 3
    assert pids[1] == pids[2] != pids[0]  # one resident answered both later events
    assert (project.home / "resident").stat().st_mode & 0o077 == 0
    assert socket_file(project).stat().st_mode & 0o077 == 0


def test_the_resident_fails_closed_on_an_agent_file_edited_meanwhile(
    project: Project, resident_ended: None
) -> None:
    relay(project, claude_event(project, "SessionStart", source="startup"))
    wait_for_resident(project)
    project.agent_file.write_text(project.agent_file.read_text() + "\n# edited\n")
    answer = relay(project, claude_event(project, "PreToolUse", **bash("ls")))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"  # type: ignore[index]
    assert "changed since you trusted it" in json.dumps(answer)
    assert decisions(project)[-1]["decision"] == "refused"


def test_with_the_resident_up_the_relay_imports_none_of_hookgate_s_engine(
    project: Project, resident_ended: None
) -> None:
    stdin = claude_event(project, "PreToolUse", **bash("ls"))
    relay(project, stdin)
    wait_for_resident(project)
    modules = imported(project, [*RELAY[1:], "claude"], stdin=stdin)
    assert "_socket" in modules
    # Nothing of hookgate, not even `site`: built-in modules and what the interpreter loads.
    assert not {name for name in modules if name.startswith("hookgate")}
    assert_none_of(modules, ("site", "json", "socket", "pathlib", "typing", "subprocess"))


@pytest.mark.parametrize(
    "env",
    [{"HOOKGATE_HOME": "~/hg"}, {"XDG_STATE_HOME": "/state"}, {"XDG_STATE_HOME": "rel"}, {}],
)
def test_the_relay_finds_the_home_hookgate_does(env: dict[str, str]) -> None:
    assert relay_module.home_directory(env) == str(default_home(env))
