#!/bin/sh
# preToolCall guard (native format): deny shell commands that remove recursively by force.
# Wire it with `matcher: ^shell$` and `onError: fail`: a guard that cannot run must not
# let the call through.
command=$(jq -r '.arguments.command // ""')
if printf '%s\n' "$command" | grep -Eq '(^|[;&|[:space:]])rm[[:space:]]+(-[a-zA-Z]*[rR][a-zA-Z]*f|-[a-zA-Z]*f[a-zA-Z]*[rR]|-[rR][[:space:]]+-f|-f[[:space:]]+-[rR])'; then
    jq -n --arg c "$command" '{action: "deny", reason: "rm -rf is not allowed by this project (\($c))"}'
    exit 0
fi
exit 0
