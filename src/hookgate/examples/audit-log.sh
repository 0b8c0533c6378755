#!/bin/sh
# postGeneration audit log (native format): one JSON line per turn, whatever its outcome.
# A blocked question arrives here as its marker, never as the question.
# The log goes to $AUDIT_LOG (default: ./audit.log). A replay (`hookgate hooks replay`
# sets HOOKGATE_REPLAY=1) is no turn of anyone's: it is not logged.
[ -n "$HOOKGATE_REPLAY" ] && exit 0
jq -c '{time: (now | todate), session: .session_id, outcome, prompt, answer}' >>"${AUDIT_LOG:-audit.log}"
