"""A scratch project for runtime and front-end tests: agent file, hook scripts, sessions.

`Project` writes the agent file (JSON, which YAML reads as is), executable hook
scripts and model scripts into a temporary directory, runs `hookgate` there as a real
subprocess, and reads back what landed under `$HOOKGATE_HOME`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from hookgate.hooks import EVENTS, ConfigError
from hookgate.messages import ToolCall
from hookgate.security.trust.record import trust_agent_file
from hookgate.security.trust.store import TrustStore
from hookgate.tools import ToolResult
from hookgate.view import NoticeKind

#: The `hookgate` console script of the environment running the tests.
HOOKGATE = Path(sys.executable).with_name("hookgate")
#: Seconds the model server may stay silent before the client gives up: far above what
#: the loopback server needs, far below a test's own timeout.
MODEL_TIMEOUT = 10


def served_model(url: str) -> dict[str, Any]:
    """The `model:` mapping of an agent talking to the chat server at `url`."""
    return {"name": "test", "base_url": url, "timeout": MODEL_TIMEOUT}


#: Seconds a `hookgate` subprocess may take before the test gives up on it; generous
#: for a loaded two-core machine (importing the openai SDK alone takes most of a second).
RUN_TIMEOUT = 30.0


@dataclass
class Project:
    """A project directory (the agent's cwd) and the `$HOOKGATE_HOME` its sessions go to."""

    dir: Path
    home: Path

    @property
    def agent_file(self) -> Path:
        return self.dir / "hookgate.yaml"

    def write_agent(self, model: str | Mapping[str, Any], **settings: Any) -> Path:
        """Write `hookgate.yaml` with `model` and any other top-level keys."""
        self.agent_file.write_text(json.dumps({"model": model, **settings}, indent=2))
        return self.agent_file

    def script(self, *replies: Mapping[str, Any], name: str = "script.yaml") -> str:
        """Write a scripted-model script; returns the `model:` value that plays it."""
        (self.dir / name).write_text(json.dumps(list(replies), indent=2))
        return f"scripted:{name}"

    def hook(self, name: str, body: str) -> str:
        """Write an executable `sh` hook script; returns the `command:` that runs it."""
        path = self.dir / "hooks" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
        return f"./hooks/{name}"

    def example(self, name: str) -> str:
        """Copy one of `hookgate.examples` into the project; returns its `command:`."""
        path = self.dir / "hooks" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(resources.files("hookgate.examples").joinpath(name).read_bytes())
        path.chmod(0o755)
        return f"./hooks/{name}"

    def recorder(self, log: Path) -> dict[str, Any]:
        """A hook appending its whole stdin, one line per run, to `log`."""
        return {"name": "record", "command": f'tee -a "{log}" >/dev/null; echo >>"{log}"'}

    def record_every_event(
        self, log: Path, hooks: Mapping[str, list[Any]] | None = None
    ) -> dict[str, list[Any]]:
        """`hooks` with a recorder appended to every event's list, known events included."""
        merged = {event: list((hooks or {}).get(event, [])) for event in EVENTS}
        for event in merged:
            merged[event].append(self.recorder(log))
        return merged

    # What the run left behind.

    def session_files(self) -> list[Path]:
        return sorted((self.home / "sessions").glob("*.jsonl"))

    def session_id(self) -> str:
        (path,) = self.session_files()
        return path.stem

    def records(self, path: Path | None = None) -> list[dict[str, Any]]:
        """Every line of the (only) session file, each of which must be a JSON object."""
        if path is None:
            (path,) = self.session_files()
        lines = path.read_text().splitlines()
        records = [json.loads(line) for line in lines]
        assert all(isinstance(record, dict) for record in records), lines
        return records

    def messages(self, path: Path | None = None) -> list[dict[str, Any]]:
        """The conversation recorded in the (only) session file."""
        return [r["message"] for r in self.records(path) if r.get("type") == "message"]

    def files_under_home(self) -> Iterator[Path]:
        return (path for path in self.home.rglob("*") if path.is_file())

    # Running the real command.

    def env(self, **extra: str) -> dict[str, str]:
        env = {**os.environ, "HOOKGATE_HOME": str(self.home), "NO_COLOR": "1", **extra}
        env.pop("OPENAI_BASE_URL", None)
        return env

    # Trust, as the owner gives it: the real recording `hookgate trust --yes` makes.

    def trust(self, agent_file: Path | None = None, env: Mapping[str, str] | None = None) -> None:
        """Trust `agent_file` (default: the project's) as it is now, in the run's home.

        A file that cannot be trusted (missing, broken) is left as it is: the run under
        test then says why.
        """
        home = Path((env or self.env())["HOOKGATE_HOME"])
        with contextlib.suppress(ConfigError):
            trust_agent_file(agent_file or self.agent_file, store=TrustStore(home))

    def _trust_for(self, args: Sequence[str], env: Mapping[str, str] | None) -> None:
        named = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--agent"]
        self.trust(self.dir / named[-1] if named else None, env)

    def hookgate(
        self,
        *args: str,
        timeout: float = RUN_TIMEOUT,
        env: Mapping[str, str] | None = None,
        trusted: bool = True,
        stdin: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run `hookgate ARGS` in the project, stdin not a terminal; output captured.

        `trusted`: trust the agent file first, as its owner would have (see `trust`).
        `stdin`: what hookgate reads on stdin (default: nothing, /dev/null).
        """
        if trusted:
            self._trust_for(args, env)
        return subprocess.run(
            [str(HOOKGATE), *args],
            cwd=self.dir,
            env=dict(env or self.env()),
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def start_hookgate(self, *args: str, trusted: bool = True) -> subprocess.Popen[str]:
        """Start `hookgate ARGS` in the project without waiting; output captured."""
        if trusted:
            self._trust_for(args, None)
        return subprocess.Popen(
            [str(HOOKGATE), *args],
            cwd=self.dir,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def read_log(log: Path) -> list[dict[str, Any]]:
    """The JSON objects a recorder hook appended to `log`, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def chat_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The `messages` of one chat-completions request body."""
    messages = body.get("messages")
    assert isinstance(messages, list), body
    return messages


def assert_tool_calls_answered(messages: Sequence[Mapping[str, Any]]) -> None:
    """The chat-completions rule real servers enforce: every call gets its tool message."""
    for index, message in enumerate(messages):
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        wanted = {call["id"] for call in message["tool_calls"]}
        answered = set()
        for later in messages[index + 1 :]:
            if later.get("role") != "tool":
                break
            answered.add(later.get("tool_call_id"))
        assert wanted <= answered, f"tool calls {sorted(wanted - answered)} have no answer"


class RecordingView:
    """A `TurnView` that keeps everything a turn reports, in order."""

    def __init__(self) -> None:
        self.deltas: list[str] = []
        self.notices: list[str] = []
        self.kinds: list[NoticeKind] = []
        self.started: list[ToolCall] = []
        self.finished: list[tuple[ToolCall, ToolResult]] = []

    def answer_text(self, delta: str) -> None:
        self.deltas.append(delta)

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        self.notices.append(text)
        self.kinds.append(kind)

    def tool_started(self, call: ToolCall) -> None:
        self.started.append(call)

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        self.finished.append((call, result))
