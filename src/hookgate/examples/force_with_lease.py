#!/usr/bin/env python3
"""preToolCall rewriter (native format): `git push --force` becomes `--force-with-lease`.

The call runs with the hook's arguments; the model's own stay in the history. A push
that would overwrite work someone else pushed meanwhile then fails instead.
"""

import json
import re
import sys

FORCE = re.compile(r"(\bgit\s+push\b[^;&|]*?)\s(?:--force|-f)(?=\s|$)")

event = json.load(sys.stdin)
command = event.get("arguments", {}).get("command", "")
rewritten = FORCE.sub(r"\1 --force-with-lease", command)
if rewritten != command:
    json.dump(
        {
            "arguments": {**event["arguments"], "command": rewritten},
            "message": "--force became --force-with-lease",
        },
        sys.stdout,
    )
