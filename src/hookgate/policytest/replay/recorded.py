"""What a recorded session holds for replay: its questions and tool calls, in order.

Each format's reader (`hookgate_session`, `claude_code`, `codex`, `gemini`) yields a
`Recording`; tool calls carry hookgate's tool name and arguments where the agent's
tool has a hookgate counterpart (`Bash` is `shell`), else the agent's own.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hookgate.hooks import ConfigError
from hookgate.hooks.records import NamedTuple
from hookgate.hooks.wording import BLOCKED_MARKER, UNCHECKED_MARKER
from hookgate.tools import ToolResult


class RecordedCall(NamedTuple):
    tool: str
    """hookgate's name for the tool, where it has one; else the agent's own."""
    arguments: Mapping[str, Any]
    result: ToolResult | None
    """What the tool returned then (None: not recorded)."""
    then: str
    """What happened then, as far as the record says: ran, failed, denied or unknown."""
    line: int
    agent_tool: str
    """The tool's name as the recording agent called it."""


class RecordedPrompt(NamedTuple):
    text: str
    line: int
    answer: str | None = None
    """The agent's last words of that turn, for postGeneration (`--all-events`)."""


class Recording(NamedTuple):
    source: str
    format: str
    cwd: Path | None
    """Where the session ran, where the record says."""
    items: list[RecordedCall | RecordedPrompt]


def is_marker(text: str) -> bool:
    """Whether a recorded question is hookgate's marker of one a hook blocked (or one
    never checked): the question itself was never kept, so there is nothing to replay."""
    return text.startswith(BLOCKED_MARKER.split("{")[0]) or text == UNCHECKED_MARKER


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each line of `path` that holds JSON; others are skipped
    (a torn last line, a blank one)."""
    try:
        with path.open("rb") as file:
            for number, line in enumerate(file, start=1):
                try:
                    yield number, json.loads(line)
                except ValueError:
                    continue
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc


def command_line(argv: Any) -> str | None:
    """A shell line from an argv list: the script of `bash -lc SCRIPT`, else the words joined."""
    if isinstance(argv, str):
        return argv
    if not isinstance(argv, list) or not all(isinstance(word, str) for word in argv):
        return None
    if (
        len(argv) == 3
        and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
        and argv[1] in ("-c", "-lc")
    ):
        return str(argv[2])
    return shlex.join(argv)


def prompt_with_answer(items: list[RecordedCall | RecordedPrompt], answer: str) -> None:
    """Set `answer` as the last question's answer (the turn's last words win)."""
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if isinstance(item, RecordedPrompt):
            items[index] = item._replace(answer=answer)
            return
