"""The Python hook of the load cases (`python: reliability.load_hook:record`).

It appends the payload it was given, as one JSON line, to
`$HOOKGATE_LOAD_LOGS/<session_id>.python.jsonl`, and allows: the file a session's
Python hook wrote must hold that session's marker and no other.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

#: The variable naming the directory the hook logs to.
LOGS_ENV = "HOOKGATE_LOAD_LOGS"


def record(event: dict[str, Any]) -> dict[str, Any]:
    """Log `event` under its session's id; allow."""
    log = Path(os.environ[LOGS_ENV]) / f"{event['session_id']}.python.jsonl"
    with log.open("a", encoding="utf-8") as file:
        file.write(json.dumps(event) + "\n")
    return {"action": "allow"}
