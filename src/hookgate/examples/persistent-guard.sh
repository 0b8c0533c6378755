#!/usr/bin/env bash
# A persistent hook in bash: read an event line, answer one line with the same id.
while IFS= read -r line; do
    [[ $line =~ ^\{\"id\":([0-9]+) ]] || exit 1  # hookgate writes the id first
    if [[ $line == *'rm -rf /'* ]]; then
        printf '{"id":%s,"reply":{"action":"deny","reason":"rm -rf / is never run here"}}\n' "${BASH_REMATCH[1]}"
    else
        printf '{"id":%s}\n' "${BASH_REMATCH[1]}"
    fi
done
