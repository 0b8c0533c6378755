#!/bin/bash
# Stop: send the agent back until its last answer holds <promise>DONE</promise>.
# The transcript reading is the ralph-wiggum plugin's stop hook's, unchanged: it greps
# the lines Claude Code writes for `"role":"assistant"` (compact JSON) and reads the
# text blocks of the last one.
set -euo pipefail
HOOK_INPUT=$(cat)
TRANSCRIPT_PATH=$(echo "$HOOK_INPUT" | jq -r '.transcript_path')
if ! grep -q '"role":"assistant"' "$TRANSCRIPT_PATH"; then
  echo "ralph: no assistant messages found in the transcript" >&2
  exit 0
fi
LAST_LINE=$(grep '"role":"assistant"' "$TRANSCRIPT_PATH" | tail -1)
LAST_OUTPUT=$(echo "$LAST_LINE" | jq -r '
  .message.content |
  map(select(.type == "text")) |
  map(.text) |
  join("\n")
')
if echo "$LAST_OUTPUT" | grep -q '<promise>DONE</promise>'; then
  exit 0
fi
jq -n '{"decision": "block", "reason": "keep going until DONE"}'
