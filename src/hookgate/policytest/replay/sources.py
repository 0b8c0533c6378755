"""Which reader a SOURCE needs: a hookgate session id, or a file recognised by its first record.

Readers are a plain table, one module per format; each says from the file's first
JSON record whether the file is its kind.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from hookgate.hooks import ConfigError
from hookgate.policytest.replay import claude_code, codex, gemini, hookgate_session
from hookgate.policytest.replay.recorded import Recording, json_lines

#: Each format's reader module, in the order they are tried.
READERS: dict[str, ModuleType] = {
    "hookgate": hookgate_session,
    "codex": codex,
    "gemini": gemini,
    "claude-code": claude_code,
}
#: JSON records read to recognise a file: Claude Code's first lines may be its own
#: bookkeeping (`queue-operation`, `summary`), not yet a message.
PROBE_RECORDS = 20


def read_source(source: str, *, open_session: Callable[[str], Path] | None = None) -> Recording:
    """The recording `source` names: a file of any known format, else a hookgate session id."""
    path = Path(source).expanduser()
    if not path.is_file():
        if open_session is None:
            raise ConfigError(f"{source}: no such file")
        path = open_session(source)
    return reader_for(path).read(path)  # type: ignore[no-any-return]


def reader_for(path: Path) -> ModuleType:
    if path.suffix == ".json":
        try:
            first = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            first = None
        if gemini.looks_like(first):
            return gemini
    else:
        for count, (_, record) in enumerate(json_lines(path)):
            for module in READERS.values():
                if module.looks_like(record):
                    return module
            if count >= PROBE_RECORDS:
                break
    raise ConfigError(
        f"{path}: not a recording replay reads",
        hint="a hookgate session (id or file), a Claude Code transcript (.jsonl), a Codex "
        "rollout (rollout-*.jsonl) or a Gemini CLI chat file (session-*.jsonl or .json)",
    )


def session_file(session_id: str) -> Path:
    """The file of hookgate session `session_id` (or the one id it starts)."""
    from hookgate.store.session import SessionStore

    return SessionStore().open(session_id).path
