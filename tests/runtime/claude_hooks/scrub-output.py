#!/usr/bin/env python3
"""PostToolUse: updatedToolOutput scrubs keys, decision block tells the model, additionalContext."""

import json
import re
import sys

event = json.load(sys.stdin)
stdout = event["tool_response"]["stdout"]
if "AKIA" in stdout:
    print(
        json.dumps(
            {
                "decision": "block",
                "reason": "an AWS key was redacted from the output",
                "hookSpecificOutput": {
                    "hookEventName": "PostToolUse",
                    "updatedToolOutput": re.sub(r"AKIA[0-9A-Z]{16}", "[redacted]", stdout),
                    "additionalContext": "post-context: keys are never shown",
                },
            }
        )
    )
