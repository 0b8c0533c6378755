"""Fixtures for hookgate inside other agents: a guarded project (the rm -rf guard and a
rewrite hook, trusted) and the way to feed `hookgate hook AGENT` an event."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runtime.project import Project

#: The rewrite hook's mark: `echo hello` becomes `echo hello-from-hookgate`.
REWRITTEN = "hello-from-hookgate"
#: What the example guard says when it denies `rm -rf build`.
GUARD_REASON = "rm -rf is not allowed by this project"
#: Seconds the resident may take to be listening once started (a loaded machine).
START_WAIT = 30.0
#: Where scripts/install-agent-clis puts the agent CLIs.
AGENT_CLIS = Path(__file__).resolve().parents[2] / ".agent-clis" / "node_modules" / ".bin"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project with `build/`, and a hooks-only `hookgate.yaml` (no `model:`): the
    example rm -rf guard (`onError: fail`) and a rewrite hook on shell calls, trusted."""
    directory = (tmp_path / "project").resolve()
    (directory / "build").mkdir(parents=True)
    home = tmp_path / "home"
    monkeypatch.setenv("HOOKGATE_HOME", str(home))
    made = Project(directory, home)
    guard = made.example("guard-rm-rf.sh")
    rewrite = made.hook(
        "tag-notes.sh",
        'jq -c \'{arguments: (.arguments | .command |= sub("echo hello"; "echo '
        + REWRITTEN
        + "\"))}'",
    )
    hooks = {"preToolCall": [
        {"name": "no-rm-rf", "matcher": "^shell$", "command": guard, "onError": "fail"},
        {"name": "tag-notes", "matcher": "^shell$", "command": rewrite},
    ]}  # fmt: skip
    made.agent_file.write_text(json.dumps({"hooks": hooks}, indent=2))
    made.trust()
    return made


def claude_event(project: Project, event: str, session: str = "sess-1", **fields: Any) -> str:
    """Claude Code's stdin for a hook of `event`, in `project`."""
    common = {"session_id": session, "transcript_path": str(project.dir / "t.jsonl"),
              "cwd": str(project.dir), "hook_event_name": event, "permission_mode": "default"}  # fmt: skip
    return json.dumps({**common, **fields})


def bash(command: str, call_id: str = "toolu_1") -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": command, "description": "run"},
            "tool_use_id": call_id}  # fmt: skip


def assert_whole_session(
    project: Project, agent: str, prompt: str, final: str, events: list[str]
) -> None:
    """The agent's (only) session in hookgate's history holds the question, both shell
    calls as the hooks left them, the guard's denial, the answer and every event."""
    (path,) = [p for p in project.session_files() if f"-{agent}-" in p.stem]
    messages = project.messages(path)
    assert messages[0] == {"role": "user", "content": prompt}
    calls = [m["tool_calls"][0] for m in messages if m.get("tool_calls")]
    commands = [call["arguments"]["command"] for call in calls]
    assert commands == ["rm -rf build", f"echo {REWRITTEN} > note.txt"]
    assert GUARD_REASON in messages[2]["content"]
    assert messages[-1] == {"role": "assistant", "content": final}
    decisions = [r["data"] for r in project.records(path) if r.get("kind") == "agent_hook"]
    assert [d["event"] for d in decisions] == events


def answer(project: Project, agent: str, stdin: str, *args: str) -> dict[str, Any]:
    """`hookgate hook AGENT` run for real on `stdin`; its JSON reply ({} for none)."""
    done = project.hookgate("hook", agent, *args, stdin=stdin, trusted=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


@pytest.fixture
def resident_ended(project: Project) -> Iterator[None]:
    """End the resident the test started: the pid its lock file holds, if that process
    is still the resident."""
    yield
    lock = project.home / "resident" / "lock"
    pid = int(lock.read_text() or 0) if lock.exists() else 0
    with contextlib.suppress(OSError):
        if pid and b"hookgate.agents.resident" in Path(f"/proc/{pid}/cmdline").read_bytes():
            os.kill(pid, signal.SIGTERM)


def socket_file(project: Project) -> Path:
    return project.home / "resident" / "hookgate.sock"


def wait_for_resident(project: Project) -> None:
    deadline = time.monotonic() + START_WAIT
    while not socket_file(project).exists():
        assert time.monotonic() < deadline, "the resident never started listening"
        time.sleep(0.05)
