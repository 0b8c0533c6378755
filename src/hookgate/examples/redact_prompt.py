#!/usr/bin/env python3
"""preGeneration redactor (native format): stop a question that holds an API key.

Keys are never rewritten into the history or sent on: the question is blocked, and
hookgate keeps only a marker with the reason below. The reason names the kind of
key, never the key itself.
"""

import json
import re
import sys

PATTERNS = {
    "an OpenAI-style API key": re.compile(r"sk-[A-Za-z0-9_-]{16,}"),
    "an AWS access key id": re.compile(r"AKIA[0-9A-Z]{16}"),
    "a GitHub token": re.compile(r"gh[pousr]_[A-Za-z0-9]{30,}"),
}

event = json.load(sys.stdin)
prompt = event.get("prompt", "")
for kind, pattern in PATTERNS.items():
    if pattern.search(prompt):
        json.dump(
            {
                "action": "block",
                "reason": f"the question holds {kind}",
                "message": "Your question was not sent: it holds a secret. "
                "Remove the key and ask again.",
            },
            sys.stdout,
        )
        break
