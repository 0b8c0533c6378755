#!/usr/bin/env python3
"""PreToolUse on Bash: no `git commit` until the transcript shows a Bash call ran pytest."""

import json
import sys

event = json.load(sys.stdin)
if "git commit" not in event["tool_input"].get("command", ""):
    sys.exit(0)
ran_tests = False
with open(event["transcript_path"]) as transcript:
    for line in transcript:
        entry = json.loads(line)
        if entry["type"] != "assistant":
            continue
        for block in entry["message"]["content"]:
            if block["type"] == "tool_use" and block["name"] == "Bash":
                ran_tests = ran_tests or "pytest" in block["input"].get("command", "")
if not ran_tests:
    print("run the tests (pytest) before committing", file=sys.stderr)
    sys.exit(2)
