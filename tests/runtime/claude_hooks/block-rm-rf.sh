#!/bin/bash
# PreToolUse: exit 2 blocks, the reason on stderr goes to the model.
input=$(cat)
case "$input" in
  *'"tool_name":"Bash"'*'rm -rf'*)
    echo "rm -rf is not allowed in this repository" >&2
    exit 2 ;;
esac
exit 0
