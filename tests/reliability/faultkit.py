"""What every fault case of the reliability suite checks, and the faults it injects.

A case must end in bounded time, leave no process behind, leave a session file that
reads back as JSONL with every tool call answered, have run `postGeneration` (a
healthy recorder hook proves it), and say clearly what failed. The helpers here check
each of those; the hook faults are shell scripts that write their pid, then misbehave.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hookgate.store.session import SessionStore
from runtime.project import Project, assert_tool_calls_answered, read_log

#: The environment variable every process a case starts inherits, with a value of its
#: own: /proc then tells which processes belong to the case, however deep they hide.
MARK_VAR = "HOOKGATE_RELIABILITY_MARK"
#: Seconds an in-process turn may take besides the fault's own timeout: well under one
#: on an idle machine; the rest is room for a loaded two-core CI runner.
TURN_MARGIN_S = 5.0
#: The same for a `hookgate` subprocess, which imports itself (and the openai SDK) first:
#: a few seconds on a loaded runner. The faults themselves last 30 s, 60 s or forever,
#: so a case within this bound still tells a hang from a slow machine.
PROCESS_MARGIN_S = 20.0
#: Seconds a stopped process may take to disappear once the case is over.
GONE_WAIT_S = 2.0
#: The `timeout` of a hook meant to hang: short, so the quick profile stays quick.
HANG_TIMEOUT_S = 0.5
#: The `timeout` of the other faulty hooks: they end within milliseconds on their own;
#: this only has to be long enough never to be what stops them on a loaded machine.
FAULT_TIMEOUT_S = 10.0
#: Bytes a flooding hook or tool writes to stdout.
FLOOD_BYTES = 100 * 1000 * 1000
#: Bytes of seeded random garbage a garbage-printing hook writes.
GARBAGE_BYTES = 4096


@dataclass(frozen=True)
class HookFault:
    """One way for a hook to misbehave: the script's body and what the notice must say."""

    name: str
    body: str
    """Shell lines run after the hook wrote its pid; `{garbage}` names a file of noise."""
    message: str
    """What the failure message holds after "failed: "."""
    timeout: float = FAULT_TIMEOUT_S


HOOK_FAULTS: dict[str, HookFault] = {
    fault.name: fault
    for fault in (
        # The background sleep holds the output pipes: the engine must not wait for it.
        HookFault("crash", "sleep 60 &\nexit 1", "exit 1"),
        HookFault("hang", "sleep 60", f"timed out after {HANG_TIMEOUT_S:g}s", HANG_TIMEOUT_S),
        HookFault(
            "flood",
            f"head -c {FLOOD_BYTES} /dev/zero",
            "the reply passed the output cap and was cut; it cannot be read",
        ),
        HookFault("garbage", 'cat "{garbage}"', "stdout is not a JSON object"),
        HookFault("suicide", "kill -9 $$", "killed by signal 9"),
    )
}


@dataclass(frozen=True)
class FaultyHook:
    """A faulty hook written to disk: its config entry and where it writes its pid."""

    entry: dict[str, Any]
    pid_file: Path

    def pid(self) -> int | None:
        """The hook's pid (its process group's id), or None if it never ran."""
        try:
            text = self.pid_file.read_text()
        except FileNotFoundError:
            return None
        return int(text) if text.endswith("\n") else None


def write_faulty_hook(directory: Path, event: str, fault: HookFault) -> FaultyHook:
    """Write the hook `faulty` that misbehaves as `fault` says at `event`.

    It runs in exec form (no shell in between), so `$$` is the leader of its own
    process group and the pid it writes is that group's id.
    """
    directory.mkdir(parents=True, exist_ok=True)
    pid_file = directory / f"{event}-{fault.name}.pid"
    garbage = directory / f"{event}-garbage.bin"
    garbage.write_bytes(random.Random(f"{event}/{fault.name}").randbytes(GARBAGE_BYTES))
    script = directory / f"faulty-{event}-{fault.name}.sh"
    body = fault.body.format(garbage=garbage)
    script.write_text(f'#!/bin/sh\necho $$ > "{pid_file}"\n{body}\n')
    script.chmod(0o755)
    entry = {"name": "faulty", "args": [str(script)], "timeout": fault.timeout}
    return FaultyHook(entry, pid_file)


def recorder(log: Path) -> dict[str, Any]:
    """A healthy hook that appends its whole stdin, one line per run, to `log`."""
    return {"name": "recorder", "command": record_to(log)}


def record_to(log: Path) -> str:
    """Shell that appends stdin to `log` as one line, in one write: a hook stopped
    midway (a cancelled turn stops its hooks) leaves a whole line or none."""
    return f'line=$(cat); printf \'%s\\n\' "$line" >> "{log}"'


def events_in(log: Path) -> list[tuple[str, str | None]]:
    """(event, outcome) of each run a recorder logged."""
    return [(entry["event"], entry.get("outcome")) for entry in read_log(log)]


@pytest.fixture
def mark(monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh value of `MARK_VAR`, set in this process's environment for the case."""
    value = secrets.token_hex(8)
    monkeypatch.setenv(MARK_VAR, value)
    return value


def marked_processes(mark: str) -> dict[int, str]:
    """Every live process but this one whose environment holds `MARK_VAR=mark`."""
    needle = f"{MARK_VAR}={mark}".encode()
    found: dict[int, str] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        pid = int(entry.name)
        if pid == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # gone while we looked, or not ours to read
        if needle in environ.split(b"\0"):
            found[pid] = command.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def assert_nothing_left(mark: str, within: float = GONE_WAIT_S) -> None:
    """Fail unless every process started with `mark` is gone within `within` seconds."""
    deadline = time.monotonic() + within
    while left := marked_processes(mark):
        if time.monotonic() > deadline:
            pytest.fail(f"processes left behind: {left}")
        time.sleep(0.02)


def assert_session_readable(home: Path, *, complete: bool = True) -> list[dict[str, Any]]:
    """Every session file under `home` is whole JSONL and replays; returns the records.

    Whole: every line is a JSON object (no torn line), the first a header; replays:
    the store reads its conversation back. `complete`: every tool call in it has its
    answer too (a run that stopped writing mid-turn cannot promise that much).
    """
    store = SessionStore(home)
    records: list[dict[str, Any]] = []
    for path in sorted(store.directory.glob("*.jsonl")):
        lines = path.read_bytes().split(b"\n")
        assert lines[-1] == b"", f"{path} does not end with a whole line"
        parsed = [json.loads(line) for line in lines[:-1]]
        assert all(isinstance(record, dict) for record in parsed), path
        assert parsed[0]["type"] == "session", path
        messages = store.open(path.stem).messages()
        if complete:
            assert_tool_calls_answered([message.to_json() for message in messages])
        records += parsed
    return records


@contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Fail the case if the block takes `seconds` or more (it is not interrupted)."""
    started = time.monotonic()
    yield
    took = time.monotonic() - started
    assert took < seconds, f"took {took:.2f}s; bound {seconds:g}s"


def marked_env(project: Project, mark: str, **extra: str) -> dict[str, str]:
    """The environment of a `hookgate` subprocess of `project`, carrying `mark`."""
    return project.env(**{MARK_VAR: mark, **extra})
