#!/usr/bin/env python3
"""PreToolUse: deny by JSON, reading tool_input.command."""

import json
import sys

event = json.load(sys.stdin)
command = event.get("tool_input", {}).get("command", "")
if event["tool_name"] == "Bash" and command.startswith("curl"):
    print(
        json.dumps(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": f"no network from the agent: {command}",
                }
            }
        )
    )
