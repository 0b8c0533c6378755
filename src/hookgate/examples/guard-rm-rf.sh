#!/bin/sh
# preToolCall guard (native format): deny shell commands that remove recursively.
# Wire it with `matcher: ^shell$` and `onError: fail`: a guard that cannot run must not
# let the call through. It fails closed on its own errors too: without jq or awk, or
# with an event it cannot read, it exits 2 (a block) and says why on stderr.
#
# A TEACHING EXAMPLE, not a sandbox. It reads the command as text split on ; & | ( )
# and backticks, with quotes and backslashes dropped, so it catches `rm -rf x`,
# `rm -r --force x`, `rm --recursive x`, `/bin/rm -rf x`, `\rm -rf x`, `sudo rm -rf x`,
# `bash -c 'rm -rf x'`, `$(rm -rf x)`, `find . -delete` and `find . -exec rm {} +`
# (and, being text, also `echo rm -rf`). It misses whatever the text does not show:
# `xargs rm` fed by find, `rm $FLAGS x`, `X=rm; $X -rf x`, `git clean -fdx`, `rmdir`,
# `mv x /tmp`, `python -c 'shutil.rmtree(...)'`, a script written first and run next.
# For a rule that holds, add `deny: ["shell(rm *)"]` (judged on each command of the
# line) and keep consent on.

fail() {
    echo "guard-rm-rf: $1; the call is blocked to be safe" >&2
    exit 2
}

command -v jq >/dev/null 2>&1 || fail "jq is not installed"
command -v awk >/dev/null 2>&1 || fail "awk is not installed"
event=$(cat) || fail "the event could not be read"
[ -n "$event" ] || fail "the event is empty"
command=$(printf '%s' "$event" | jq -er '.arguments.command // "" | strings') ||
    fail "the event is not a shell call's JSON"

# One line per command: split on separators and substitutions, quotes and escapes dropped.
found=$(printf '%s\n' "$command" | tr -d "\\\\'\"" | tr ';&|()`{}' '\n\n\n\n\n\n\n\n' | awk '
    function name(word) { sub(/.*\//, "", word); return word }
    {
        rm = 0; find = 0
        for (i = 1; i <= NF; i++) {
            if (name($i) == "rm") rm = 1
            else if (rm && ($i ~ /^-[a-zA-Z]*[rR]/ || $i == "--recursive")) { print "rm -r"; exit }
            if ($i == "find") find = 1
            else if (find && $i == "-delete") { print "find -delete"; exit }
            else if (find && $i ~ /^-(exec|execdir|ok|okdir)$/ && name($(i + 1)) == "rm") {
                print "find " $i " rm"; exit
            }
        }
    }') || fail "awk failed"

if [ -n "$found" ]; then
    jq -n --arg c "$command" --arg f "$found" \
        '{action: "deny", reason: "rm -rf is not allowed by this project (\($f): \($c))"}' ||
        fail "jq could not write the reply"
fi
exit 0
