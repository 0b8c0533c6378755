"""One writer per session: the lock, and reading back what two writers left."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hookgate.messages import Message, ToolCall
from hookgate.runtime.agent import open_agent
from hookgate.runtime.consent import AlwaysDeny
from hookgate.runtime.history import UNSAVED_RESULT, History, answer_every_call
from hookgate.store.lock import SessionBusy
from hookgate.store.session import SessionStore
from runtime.project import Project
from support.acp_client import wait_for_file
from support.openai_rules import assert_strict_server_accepts, strict_violations

CALL_A = ToolCall("a", "shell", {"command": "echo a"})
CALL_B = ToolCall("b", "shell", {"command": "echo b"})


def test_a_held_session_is_busy_naming_the_holder_until_closed(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home")
    held = store.create(agent_file="a.yaml", cwd="/p")
    held.lock()
    other = store.open(held.id)

    with pytest.raises(SessionBusy) as busy:
        other.lock()

    assert busy.value.holder == os.getpid()
    assert f"session {held.id} is in use by hookgate (pid {os.getpid()})" in str(busy.value)
    held.close()
    other.lock()
    other.close()


def test_the_lock_is_not_inherited_by_child_processes(tmp_path: Path) -> None:
    """A hook or tool outliving its turn must not keep the session locked."""
    store = SessionStore(tmp_path / "home")
    session = store.create(agent_file="a.yaml", cwd="/p")
    session.lock()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        session.close()
        again = store.open(session.id)
        again.lock()
        again.close()
    finally:
        child.kill()
        child.wait()


def message(role: str, text: str = "", *calls: ToolCall, answers: str | None = None) -> Message:
    return Message(role, text, tuple(calls), answers)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("written", "dropped"),
    [
        pytest.param(  # B's question lands between A's call and its result
            [message("user", "A"), message("assistant", "", CALL_A), message("user", "B"),
             message("tool", "a", answers="a"), message("assistant", "done")], 1, id="question",
        ),
        pytest.param(  # both turns call tools; results arrive in the other order
            [message("assistant", "", CALL_A), message("assistant", "", CALL_B),
             message("tool", "b", answers="b"), message("tool", "a", answers="a")], 1, id="calls",
        ),
        pytest.param(  # one result written twice
            [message("assistant", "", CALL_A), message("tool", "a", answers="a"),
             message("tool", "a", answers="a")], 1, id="twice",
        ),
        pytest.param(  # a result whose call never reached the file
            [message("user", "A"), message("tool", "x", answers="x")], 1, id="orphan",
        ),
    ],
)  # fmt: skip
def test_an_interleaved_history_reads_back_as_a_strict_conversation(
    written: list[Message], dropped: int
) -> None:
    assert strict_violations([m.to_json() for m in written])

    repaired, left_out = answer_every_call(written)

    assert_strict_server_accepts([m.to_json() for m in repaired])
    assert left_out == dropped
    calls = [call.id for m in repaired for call in m.tool_calls]
    answers = [m.tool_call_id for m in repaired if m.role == "tool"]
    assert answers == calls  # each call answered once, in order


def test_resuming_an_interleaved_file_says_what_was_left_out(tmp_path: Path) -> None:
    session = SessionStore(tmp_path / "home").create(agent_file="a.yaml", cwd="/p")
    for written in (message("assistant", "", CALL_A), message("user", "B"),
                    message("tool", "a", answers="a")):  # fmt: skip
        session.append_message(written)
    notices: list[str] = []

    history = History.load(session, notices.append)

    assert [m.content for m in history.messages] == ["", UNSAVED_RESULT, "B"]
    assert notices == [
        f"left out 1 tool result(s) of {session.path} that answered no open call "
        "(two hookgates wrote this session at once?)"
    ]


@pytest.mark.anyio
async def test_a_session_whose_opening_was_cancelled_is_free_again(project: Project) -> None:
    """ACP lives on after a cancelled session/new: the session must not stay locked."""
    hang = {"name": "hang", "command": "touch started; sleep 30", "timeout": 60}
    project.write_agent(project.script({"text": "hello"}), hooks={"sessionStart": [hang]})
    project.trust()
    store = SessionStore(project.home)
    session = store.create(agent_file=str(project.agent_file), cwd=str(project.dir))
    opening = asyncio.ensure_future(
        open_agent(project.agent_file, notify=print, consent=AlwaysDeny(), store=store,
                   continue_last=True)
    )  # fmt: skip
    await wait_for_file(project.dir / "started")

    opening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await opening

    again = store.open(session.id)
    again.lock()
    again.close()
