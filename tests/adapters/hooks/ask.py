#!/usr/bin/env python3
"""A Claude-format PreToolUse hook that asks for consent for every call it sees."""

import json
import sys

json.load(sys.stdin)
decision = {"permissionDecision": "ask", "permissionDecisionReason": "deploys need a person"}
json.dump({"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}, sys.stdout)
