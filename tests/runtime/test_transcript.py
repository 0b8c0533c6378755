"""The transcript hooks read: Claude's JSONL shape, up to date at each hook, private.

Hooks are real processes that copy the file named by `$HOOKGATE_TRANSCRIPT_PATH` at the
moment they run; the model is the real `openai` client against the loopback server.
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.turn import PromptBlocked, run_turn
from hookgate.store.transcript import random_uuid, transcript_path
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView, served_model
from support.chat_server import ChatServer, ServedReply, ServedToolCall

pytestmark = pytest.mark.anyio


def snapshot_hook(project: Project, name: str, copy: Path) -> dict[str, Any]:
    """A hook that copies the transcript, as it is when the hook runs, to `copy`."""
    return {"name": name, "command": project.hook(name, f'cp "$HOOKGATE_TRANSCRIPT_PATH" {copy}')}


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def blocks(line: dict[str, Any]) -> list[dict[str, Any]]:
    """The line's content blocks; a question's content is a string, as Claude writes it."""
    content = line["message"]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def texts(lines: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(type, text) of every text block, in order."""
    return [
        (line["type"], block["text"])
        for line in lines
        for block in blocks(line)
        if block["type"] == "text"
    ]


async def test_a_pre_tool_call_hook_reads_the_earlier_turns_and_this_question(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    seen = tmp_path / "seen-at-pre-tool-call.jsonl"
    project.write_agent(
        served_model(chat_server.url),
        yolo=True,
        hooks={"preToolCall": [snapshot_hook(project, "snap", seen)]},
    )
    chat_server.queue(
        ServedReply(text="Hello there."),
        ServedReply(tool_calls=[ServedToolCall("shell", {"command": "echo hi"}, id="call_1")]),
        ServedReply(text="It printed hi."),
    )
    agent = await open_project_agent()

    await run_turn(agent, "first question", RecordingView())
    await run_turn(agent, "second question: run echo", RecordingView())

    assert texts(lines_of(seen)) == [
        ("user", "first question"),
        ("assistant", "Hello there."),
        ("user", "second question: run echo"),
    ]
    path = transcript_path(project.home, agent.session_id)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    final = lines_of(path)
    assert [line["type"] for line in final] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    call, result = final[3]["message"], final[4]["message"]
    assert call["model"] == "test"
    # Claude's tool names and argument shapes, as a hook written for Claude Code parses them.
    assert call["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "Bash", "input": {"command": "echo hi"}}
    ]
    (block,) = result["content"]
    assert block["type"] == "tool_result"
    assert block["tool_use_id"] == "call_1"
    assert "hi" in block["content"]
    assert all(line["sessionId"] == agent.session_id for line in final)
    assert [line["parentUuid"] for line in final[1:]] == [line["uuid"] for line in final[:-1]]


async def test_a_blocked_questions_secret_never_reaches_the_transcript(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    seen = tmp_path / "seen-at-post-generation.jsonl"
    guard = project.hook("guard", "grep -q hunter2 && { echo 'a password'; exit 2; }; exit 0")
    project.write_agent(
        served_model(chat_server.url),
        hooks={
            "preGeneration": [{"command": guard}],
            "postGeneration": [snapshot_hook(project, "snap", seen)],
        },
    )
    agent = await open_project_agent()

    outcome = await run_turn(agent, "my password is hunter2", RecordingView())

    assert isinstance(outcome, PromptBlocked)
    path = transcript_path(project.home, agent.session_id)
    for written in (path, seen):
        assert "hunter2" not in written.read_text()
        assert ("user", "[prompt blocked by a hook: a password]") in texts(lines_of(written))


async def test_a_resumed_session_s_hooks_read_its_earlier_turns_from_the_start(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    seen = tmp_path / "seen-at-session-start.jsonl"
    project.write_agent(
        served_model(chat_server.url),
        hooks={"sessionStart": [snapshot_hook(project, "snap", seen)]},
    )
    chat_server.queue(ServedReply(text="Noted."))
    first = await open_project_agent()
    await run_turn(first, "remember the number 42", RecordingView())
    await first.aclose()
    assert texts(lines_of(seen)) == []  # a new session: nothing yet

    await open_project_agent(resume=first.session_id)

    assert texts(lines_of(seen)) == [("user", "remember the number 42"), ("assistant", "Noted.")]


async def test_a_claude_hook_finds_the_transcript_at_transcript_path(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    """A Claude Code hook reads `.transcript_path` from its stdin, as it does under Claude."""
    seen = tmp_path / "seen-by-claude-hook.jsonl"
    reads_stdin = (
        "import json, shutil, sys\n"
        f"shutil.copy(json.load(sys.stdin)['transcript_path'], {str(seen)!r})\n"
    )
    hook = {"name": "snap", "format": "claude", "args": ["python3", "-c", reads_stdin]}
    project.write_agent(served_model(chat_server.url), yolo=True, hooks={"preToolCall": [hook]})
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("shell", {"command": "echo hi"}, id="call_1")]),
        ServedReply(text="It printed hi."),
    )
    agent = await open_project_agent()

    await run_turn(agent, "run echo", RecordingView())

    assert texts(lines_of(seen)) == [("user", "run echo")]


async def test_file_calls_are_written_as_claude_writes_them_with_absolute_paths(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    project.write_agent(served_model(chat_server.url), yolo=True)
    chat_server.queue(
        ServedReply(
            tool_calls=[
                ServedToolCall("write_file", {"path": "notes.txt", "content": "hi"}, id="c1"),
                ServedToolCall("shell", {"command": "true", "timeout": 5}, id="c2"),
            ]
        ),
        ServedReply(text="Done."),
    )
    agent = await open_project_agent()

    await run_turn(agent, "write the notes", RecordingView())

    lines = lines_of(transcript_path(project.home, agent.session_id))
    uses = [b for line in lines for b in blocks(line) if b["type"] == "tool_use"]
    assert [(use["name"], use["input"]) for use in uses] == [
        ("Write", {"file_path": str(Path.cwd() / "notes.txt"), "content": "hi"}),
        ("Bash", {"command": "true", "timeout": 5000}),
    ]


def test_each_line_id_is_a_random_version_4_uuid_as_uuid4_writes_it() -> None:
    ids = [random_uuid() for _ in range(2000)]

    for text in ids:
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed) == text  # lower-case hex, dashes where uuid4() puts them
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize(("transcript_is", "writes"), [("intact", 0), ("gone", 1), ("short", 1)])
async def test_resuming_reads_the_session_file_once_and_writes_the_transcript_at_most_once(
    project: Project,
    chat_server: ChatServer,
    open_project_agent: OpenAgent,
    monkeypatch: pytest.MonkeyPatch,
    transcript_is: str,
    writes: int,
) -> None:
    """Counted while a session of 20 turns resumes: the reads of the session file, and the
    writes into the transcript: none where the last run left it whole, one (every line
    at once) where it is gone or short of a line. It paid two reads and a write per
    message, and a 10,000-turn session 0.6 s for it."""
    project.write_agent(served_model(chat_server.url))
    chat_server.queue(*(ServedReply(text=f"answer {n}") for n in range(20)))
    first = await open_project_agent()
    for n in range(20):
        await run_turn(first, f"question {n}", RecordingView())
    await first.aclose()
    session_file = project.session_files()[0]
    transcript = transcript_path(project.home, first.session_id)
    whole = transcript.read_text()
    if transcript_is == "gone":
        transcript.unlink()
    elif transcript_is == "short":
        transcript.write_text("".join(whole.splitlines(keepends=True)[:-1]))
    reads, written = [], []
    real_read_bytes, real_write = Path.read_bytes, os.write

    def read_bytes(path: Path) -> bytes:
        reads.append(path)
        return real_read_bytes(path)

    def write(fd: int, data: Any) -> int:
        if os.readlink(f"/proc/self/fd/{fd}") == str(transcript):
            written.append(len(data))
        return real_write(fd, data)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    monkeypatch.setattr(os, "write", write)
    resumed = await open_project_agent(resume=first.session_id)
    monkeypatch.undo()

    assert reads.count(session_file) == 1
    assert len(written) == writes
    lines = lines_of(transcript)
    assert texts(lines) == texts([json.loads(line) for line in whole.splitlines()])
    assert [line["parentUuid"] for line in lines[1:]] == [line["uuid"] for line in lines[:-1]]
    await resumed.aclose()
