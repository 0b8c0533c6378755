"""A resume with compaction on reads only what its context needs of the session file.

A compaction record stands for everything before it but the messages it kept: the lines
before those are never parsed, so a long session resumes at the cost of its last part,
and a record spoilt long before the last summary does not stop the resume.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hookgate.messages import Message, ToolCall
from hookgate.runtime.compaction import COMPACTED
from hookgate.runtime.history import replay
from hookgate.runtime.resume import read_for_resume
from hookgate.store.session import Session, SessionStore
from runtime.project import Project, chat_messages, served_model
from support.chat_server import ChatServer, ServedReply

#: Turns of the long session, and where its compactions happened.
TURNS = 2_000
COMPACTIONS = (500, 1_000, 1_500, 1_990)
KEPT = 6
#: What a message line spoilt by hand looks like: a message record that is no message.
SPOILT = b'{"type":"message","message":null}'


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "home")


def write_long_session(session: Session) -> None:
    """`TURNS` turns as hookgate records them, a compaction (summary, `KEPT` messages
    kept) after each turn of `COMPACTIONS`."""
    for n in range(TURNS):
        session.append_message(Message("user", f"question {n}"))
        session.append_message(Message("assistant", f"answer {n}"))
        if n + 1 in COMPACTIONS:
            data = {"messages_summarised": 2 * (n + 1) - KEPT, "kept": KEPT,
                    "summary": f"summary up to {n}", "summarised": True}  # fmt: skip
            session.append_event(COMPACTED, data)


def spoil_before(path: Path, keep_from: bytes) -> int:
    """Spoil every message line before the line that starts with `keep_from`; how many."""
    lines = path.read_bytes().split(b"\n")
    cut = next(i for i, line in enumerate(lines) if line.startswith(keep_from))
    spoilt = 0
    for index in range(1, cut):
        if lines[index].startswith(b'{"type":"message",'):
            lines[index], spoilt = SPOILT, spoilt + 1
    path.write_bytes(b"\n".join(lines))
    return spoilt


def test_a_resume_parses_nothing_before_the_messages_the_last_summary_kept(
    project: Project, chat_server: ChatServer
) -> None:
    """Every message line before the last summary's kept ones is spoilt after the first
    resume: the next `hookgate -c -p` still answers, from the summary on (before, the
    whole file was parsed, and the spoilt line stopped the resume)."""
    project.write_agent(served_model(chat_server.url))
    session = SessionStore(project.home).create(
        agent_file=str(project.agent_file), cwd=str(project.dir)
    )
    write_long_session(session)
    chat_server.queue(ServedReply(text="first"), ServedReply(text="second"))
    first = project.hookgate("-c", "-p", "one more")
    assert first.returncode == 0, first.stderr
    kept_from = b'{"type":"message","message":{"role":"user","content":"question 1987"}'

    spoilt = spoil_before(session.path, kept_from)
    second = project.hookgate("-c", "-p", "and another")

    assert spoilt > 3_900
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "second"
    sent = [m["content"] for m in chat_messages(chat_server.requests[-1].body)][1:]
    kept = [text for n in range(1_987, TURNS) for text in (f"question {n}", f"answer {n}")]
    summary = "[summary of earlier turns]\nsummary up to 1989"
    assert sent == [summary, "Understood.", *kept, "one more", "first", "and another"]
    # The transcript the first resume wrote is kept: it holds every message already.
    transcript = project.home / "transcripts" / session.path.name
    assert transcript.read_bytes().count(b"\n") == 2 * TURNS + 4


def test_a_resume_without_compaction_still_reads_the_whole_file(store: SessionStore) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    for n in range(50):
        session.append_message(Message("user", f"question {n}"))
    resumed = read_for_resume(session)
    assert resumed.whole
    assert len(resumed.entries) == resumed.recorded.messages == 50
    assert resumed.last == Message("user", "question 49")


def test_a_resume_reads_from_the_kept_messages_on(store: SessionStore) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    write_long_session(session)
    resumed = read_for_resume(session)
    assert not resumed.whole
    # The kept messages, the compaction, and the 10 turns after it: no more.
    assert len(resumed.entries) == KEPT + 1 + 2 * (TURNS - COMPACTIONS[-1])
    assert resumed.recorded.messages == 2 * TURNS
    assert resumed.last == Message("assistant", f"answer {TURNS - 1}")
    assert replay(resumed.entries) == replay(session.entries())


def test_a_summary_that_kept_nothing_is_where_the_resume_starts(store: SessionStore) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    for n in range(20):
        session.append_message(Message("user", f"question {n}"))
    session.append_event(COMPACTED, {"summary": "all of it", "kept": 0})
    resumed = read_for_resume(session)
    assert len(resumed.entries) == 1
    assert resumed.last == Message("user", "question 19")
    assert resumed.recorded.messages == 20
    assert replay(resumed.entries) == replay(session.entries())


def random_session(session: Session, rng: random.Random) -> None:
    """Turns with tool calls, unanswered calls, stray results, torn lines, other events
    and compactions that keep few or many messages, some more than there are."""
    calls = 0
    for n in range(rng.randrange(5, 60)):
        roll = rng.random()
        if roll < 0.15:
            kept = rng.choice([0, 1, 2, 3, 6, 7, 40])
            session.append_event(COMPACTED, {"summary": f"s{n}", "kept": kept})
        elif roll < 0.2:
            session.append_event("turn_end", {"n": n})
        elif roll < 0.25:
            with session.path.open("ab") as file:
                file.write(b'{"type":"message","mess')  # a torn line
        elif roll < 0.55:
            ids = [f"call_{calls + i}" for i in range(rng.randrange(1, 3))]
            calls += len(ids)
            asked = tuple(ToolCall(id_, "read_file", {"path": "a"}) for id_ in ids)
            session.append_message(Message("assistant", "", asked))
            for id_ in ids[: rng.randrange(len(ids) + 1)]:
                session.append_message(Message("tool", f"result {id_}", tool_call_id=id_))
        elif roll < 0.6:
            session.append_message(Message("tool", "stray", tool_call_id="call_none"))
        else:
            role = rng.choice(["user", "assistant"])
            session.append_message(Message(role, f"{role} {n}"))  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(40))
def test_the_context_read_from_the_end_is_the_context_of_the_whole_file(
    store: SessionStore, seed: int
) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    random_session(session, random.Random(seed))
    resumed = read_for_resume(session)
    whole = session.messages()
    assert replay(resumed.entries)[0] == replay(session.entries())[0]
    assert resumed.last == (whole[-1] if whole else None)
    assert list(resumed.recorded.read_all()) == whole


def test_an_unanswered_call_before_the_kept_messages_is_answered_as_before(
    store: SessionStore,
) -> None:
    session = store.create(agent_file="a.yaml", cwd="/p")
    asked = (ToolCall("call_1", "read_file", {"path": "a"}),)
    for message in [Message("user", "q"), Message("assistant", "", asked), Message("user", "r")]:
        session.append_message(message)
    session.append_event(COMPACTED, {"summary": "s", "kept": 2})
    resumed = read_for_resume(session)
    assert resumed.entries[0] == Message("assistant", "", asked)
    assert replay(resumed.entries) == replay(session.entries())
