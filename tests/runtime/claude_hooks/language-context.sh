#!/bin/bash
# UserPromptSubmit and SessionStart: additionalContext in Claude's JSON form.
event=$(jq -r .hook_event_name)
printf '{"hookSpecificOutput": {"hookEventName": "%s", "additionalContext": "%s-context: answer in French"}}\n' \
  "$event" "$event"
