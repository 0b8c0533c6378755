"""`hookgate hook AGENT` runs once per event of another agent: it imports only what the
event needs (held by running it for real under `python -X importtime`)."""

from __future__ import annotations

import pytest

from agent_clis.conftest import bash, claude_event
from frontends.test_startup_imports import (
    ARGPARSE,
    EVENT_LOOP,
    OPENSSL_HASHES,
    PARSER,
    SESSION_ONLY,
    SLOW_STDLIB,
    SUBPROCESS,
    TYPING,
    UNUSED_PARTS,
    assert_none_of,
    imported,
)
from runtime.project import HOOKGATE, Project

#: What the event needs that `hooks fire` does not: the audit trail's messages, and the
#: pins that hold each hook file to its trusted digest (as in a session of hookgate's).
NEEDED = ("hookgate.messages", "hookgate.hooks.runs.pins")
#: Imported by `install` alone: the diff it shows, the other agents' modules; and what
#: an event does without: `datetime` (the audit trail's ids are `time`'s), `threading`
#: (its lock is `_thread`'s), the bash parser (a hook line of plain words needs none).
NOT_PER_EVENT = ("difflib", "hookgate.agents.install", "hookgate.agents.codex",
                 "hookgate.agents.gemini", "datetime", "threading",
                 "hookgate.hooks.shell.words")  # fmt: skip


@pytest.mark.parametrize("command", ["rm -rf build", "ls"], ids=["denied", "allowed"])
def test_a_hook_event_imports_no_event_loop_parser_or_session_parts(
    project: Project, command: str
) -> None:
    stdin = claude_event(project, "PreToolUse", **bash(command))
    argv = [str(HOOKGATE), "hook", "claude"]
    imported(project, argv, stdin=stdin)  # the first run parses and caches the agent file
    modules = imported(project, argv, stdin=stdin)
    assert "hookgate.agents.claude" in modules
    unused = tuple(name for name in UNUSED_PARTS if name not in NEEDED)
    assert_none_of(modules, EVENT_LOOP + SESSION_ONLY + PARSER + OPENSSL_HASHES + SUBPROCESS
                   + SLOW_STDLIB + TYPING + ARGPARSE + unused + NOT_PER_EVENT)  # fmt: skip


def test_an_event_no_hook_matches_starts_no_process(project: Project) -> None:
    read = claude_event(project, "PreToolUse", tool_name="Read",
                        tool_input={"file_path": "/etc/hostname"}, tool_use_id="t1")  # fmt: skip
    imported(project, [str(HOOKGATE), "hook", "claude"], stdin=read)
    assert "ctypes" not in imported(project, [str(HOOKGATE), "hook", "claude"], stdin=read)
