#!/bin/bash
# UserPromptSubmit: block prompts with a password; otherwise plain stdout is context.
input=$(cat)
if printf '%s' "$input" | grep -qi 'password'; then
  echo '{"decision": "block", "reason": "the prompt holds a password"}'
  exit 0
fi
echo "prompt-context: the project uses tabs"
