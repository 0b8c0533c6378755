#!/usr/bin/env python3
"""PreToolUse: allow + updatedInput, and additionalContext."""

import json
import sys

event = json.load(sys.stdin)
tool_input = event["tool_input"]
if tool_input.get("command", "").startswith("echo one"):
    tool_input["command"] = "echo rewritten"
    print(
        json.dumps(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "updatedInput": tool_input,
                    "additionalContext": "pre-context: the command was rewritten",
                }
            }
        )
    )
