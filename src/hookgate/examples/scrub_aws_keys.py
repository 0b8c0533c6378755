#!/usr/bin/env python3
"""postToolCall rewriter (native format): replace AWS keys in a tool's output.

The replaced result is what the model and the user both see.
"""

import json
import re
import sys

KEY = re.compile(r"AKIA[0-9A-Z]{16}")
SECRET = re.compile(r"(aws_secret_access_key\s*[=:]\s*)\S+", re.IGNORECASE)

event = json.load(sys.stdin)
content = event["result"]["content"]
clean = SECRET.sub(r"\1[REDACTED]", KEY.sub("[REDACTED_KEY]", content))
if clean != content:
    json.dump(
        {"result": clean, "message": "AWS credentials scrubbed from the tool output"}, sys.stdout
    )
