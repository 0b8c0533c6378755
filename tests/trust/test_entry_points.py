"""A clone of a hostile repository runs nothing, starts nothing and sends nothing, in
any entry point, until `hookgate trust`; then one byte changed anywhere in its trust
closure makes every entry point refuse again."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from acp import RequestError

from hookgate.hooks.files.yamlfile import MAX_SIZE
from runtime.project import HOOKGATE, Project
from support.acp_client import acp_peer
from support.chat_server import ChatServer, ServedReply
from trust.hostile import TOKEN, Hostile, plant

#: The ways a user starts hookgate on an agent file, beyond ACP (its own test below).
ENTRY_POINTS = {
    "print": ["-p", "hi"],
    "line mode": [],
    "ask": ["--ask", "helper", "hi"],
    "continue": ["-c", "-p", "hi"],
    "resume": ["-r", "20260101-000000-abcdef", "-p", "hi"],
}


@pytest.fixture
def hostile(project: Project, chat_server: ChatServer, tmp_path: Path) -> Hostile:
    return plant(project, chat_server, tmp_path / "markers")


def run(hostile: Hostile, *args: str) -> subprocess.CompletedProcess[str]:
    return hostile.project.hookgate(*args, env=hostile.env(), trusted=False)


def assert_refused(done: subprocess.CompletedProcess[str], hostile: Hostile, what: str) -> None:
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert f"{hostile.project.agent_file} is not trusted: {what}" in done.stderr
    assert f"hookgate trust {hostile.project.agent_file}" in done.stderr
    assert "Traceback" not in done.stderr
    assert hostile.traces() == []


@pytest.mark.parametrize("args", ENTRY_POINTS.values(), ids=ENTRY_POINTS.keys())
def test_an_untrusted_clone_runs_starts_and_sends_nothing(
    hostile: Hostile, args: list[str]
) -> None:
    assert_refused(run(hostile, *args), hostile, "hookgate runs nothing it names")


@pytest.mark.anyio
async def test_acp_session_new_answers_an_error_and_runs_nothing(
    hostile: Hostile, tmp_path: Path
) -> None:
    project = hostile.project
    async with acp_peer(HOOKGATE, project.dir, hostile.env(), tmp_path / "acp.err") as peer:
        with pytest.raises(RequestError) as refused:
            await peer.new_session()
    assert f"{project.agent_file} is not trusted" in str(refused.value.data)
    assert hostile.traces() == []


def trust(hostile: Hostile) -> None:
    done = hostile.project.hookgate("trust", "--yes", env=hostile.env(), trusted=False)
    assert done.returncode == 0, done.stderr


def test_once_trusted_it_runs_and_sends_the_key_it_named(hostile: Hostile) -> None:
    trust(hostile)
    hostile.server.queue(ServedReply(text="hello"))

    done = run(hostile, "-p", "hi")

    assert (done.returncode, done.stdout) == (0, "hello\n"), done.stderr
    assert hostile.traces() == ["mcp-server", "preGeneration", "sessionStart", "model request 1"]
    assert hostile.server.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


CHANGES = {
    "agent file": (lambda h: h.project.agent_file, "agent file"),
    "hook script": (lambda h: h.hook_script, "sessionStart hook script"),
    "asked agent's file": (lambda h: h.asked_file, "asked agent's file"),
}


@pytest.mark.parametrize(("changed", "role"), CHANGES.values(), ids=CHANGES.keys())
def test_one_byte_changed_makes_every_entry_point_refuse_again(
    hostile: Hostile, changed: object, role: str
) -> None:
    trust(hostile)
    path: Path = changed(hostile)  # type: ignore[operator]
    path.write_bytes(path.read_bytes() + b" ")

    for args in ENTRY_POINTS.values():
        assert_refused(run(hostile, *args), hostile, f"{role} {path} changed since you trusted it")


@pytest.mark.anyio
async def test_acp_the_next_session_new_refuses_a_file_changed_meanwhile(
    hostile: Hostile, tmp_path: Path
) -> None:
    """What one session's shell writes, the next `session/new` of the same process refuses."""
    project = hostile.project
    trust(hostile)
    async with acp_peer(HOOKGATE, project.dir, hostile.env(), tmp_path / "acp.err") as peer:
        await peer.new_session()
        assert "sessionStart" in hostile.traces()
        hostile.hook_script.write_text(f"#!/bin/sh\ntouch {hostile.markers}/rewritten\n")
        with pytest.raises(RequestError) as refused:
            await peer.new_session()
    assert f"sessionStart hook script {hostile.hook_script} changed" in str(refused.value.data)
    assert "rewritten" not in hostile.traces()


def alias_bomb(levels: int = 10) -> str:
    """An agent file whose hook's `env` is nine aliases of nine aliases, `levels` deep:
    a few hundred bytes that stand for 9**levels values."""
    lines = ["model: scripted:script.yaml", "b0: &b0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"b{n}: &b{n} [{', '.join([f'*b{n - 1}'] * 9)}]" for n in range(1, levels)]
    lines += [
        "hooks:",
        "  sessionStart:",
        "    - command: touch pwned",
        f"      env: {{A: *b{levels - 1}}}",
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "args", [["-p", "hi"], ["trust"], ["hooks", "check"]], ids=["print", "trust", "check"]
)
def test_an_alias_bomb_in_an_untrusted_clone_is_refused_at_once(
    project: Project, args: list[str]
) -> None:
    """Reading the file to show what trusting it means must not be the attack: the
    parse is refused within its value budget, where it used to exhaust memory."""
    project.agent_file.write_text(alias_bomb())
    done = project.hookgate(*args, trusted=False, timeout=30)
    assert done.returncode != 0
    assert "more than 1,000,000 values, each alias counted as a copy of its anchor" in (done.stderr)
    assert "Traceback" not in done.stderr
    assert not (project.dir / "pwned").exists()


@pytest.mark.parametrize(
    "args", [["-p", "hi"], ["trust"], ["hooks", "check"]], ids=["print", "trust", "check"]
)
@pytest.mark.parametrize("planted", ["a symlink to /dev/zero", "a file past the size limit"])
def test_an_agent_file_that_never_ends_is_refused_unread(
    project: Project, args: list[str], planted: str
) -> None:
    """Git keeps symlinks: a clone's `hookgate.yaml` can point at /dev/zero, which was
    read until the memory ran out."""
    if planted.startswith("a symlink"):
        project.agent_file.symlink_to("/dev/zero")
        says = "hookgate.yaml: not a regular file (a link to /dev/zero)"
    else:
        project.agent_file.write_text("# " + "x" * MAX_SIZE)
        says = f"more than {MAX_SIZE:,} bytes, more than a config file may hold"
    done = project.hookgate(*args, trusted=False, timeout=30)
    assert done.returncode != 0
    assert says in done.stderr
    assert "Traceback" not in done.stderr
