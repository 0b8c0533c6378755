#!/bin/sh
# postGeneration audit log (native format): one JSON line per turn, whatever its outcome.
# A blocked question arrives here as its marker, never as the question.
# The log goes to $AUDIT_LOG (default: ./audit.log). A replay (`hookgate hooks replay`
# sets HOOKGATE_REPLAY=1) is no turn of anyone's: it is not logged.
[ -n "$HOOKGATE_REPLAY" ] && exit 0
log=${AUDIT_LOG:-audit.log}
# This hook runs outside the sandbox, and the model may write the project: a link it
# planted at the log's name would have the turn's answer appended to what the link
# names (~/.bashrc, whose next reading would run a `$(...)` in it). Write only a file.
if [ -L "$log" ] || { [ -e "$log" ] && [ ! -f "$log" ]; }; then
  echo "audit-log: $log is a symbolic link or no regular file; not written" >&2
  exit 1
fi
jq -c '{time: (now | todate), session: .session_id, outcome, prompt, answer}' >>"$log"
