#!/usr/bin/env python3
"""A persistent preToolCall hook: one process for the whole session, one line per event."""

import json
import sys

for line in sys.stdin:  # {"id": N, "event": {...}}: the event a process hook reads
    message = json.loads(line)
    command = str(message["event"].get("arguments", {}).get("command", ""))
    reply: dict[str, str] | None = None  # None: no objection, the call goes on
    if "rm -rf /" in command:
        reply = {"action": "deny", "reason": "rm -rf / is never run here"}
    # One line per event, with its id, in one write, flushed: hookgate is waiting.
    sys.stdout.write(json.dumps({"id": message["id"], "reply": reply}) + "\n")
    sys.stdout.flush()
