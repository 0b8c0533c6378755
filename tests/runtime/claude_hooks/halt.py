#!/usr/bin/env python3
"""Any event: continue false stops the agent."""

import json
import sys

event = json.load(sys.stdin)
if "halt" in json.dumps(event.get("tool_input", {})):
    print(
        json.dumps(
            {
                "continue": False,
                "stopReason": "halted by policy",
                "systemMessage": "the policy halted the agent",
            }
        )
    )
