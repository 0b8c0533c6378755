"""The table of command lines every shell rule is held to, each against an allow rule
and a deny rule (docs/security.md, "What permission rules promise").

A hostile line must not be allowed by the rule that names its text, and the deny rule
on what it hides must fire; an ordinary line must stay allowed and pass the deny rule.
Each hostile line is also run by the real bash in a scratch directory first: the test
proves it does what the table says (deletes `x`, or creates `pwned`), so a row can
never be a harmless line that the policy happens to refuse.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

from hookgate.security.policy import Policy, Verdict

#: Seconds a hostile line may run in the scratch directory.
RUN_TIMEOUT = 10


class Row(NamedTuple):
    line: str
    allow: str
    allowed: bool
    deny: str
    denied: bool
    effect: str | None = None
    """"deletes x" or "creates pwned": what the real bash does with the line."""


RM, TOUCH = "shell(rm *)", "shell(touch *)"
#: An allow rule naming every command as written, yet not `shell(*)`, which allows all.
ANY = "shell(*[a-z]*)"
DELETES, CREATES = "deletes x", "creates pwned"

ROWS = [
    # Ordinary lines: allowed by their rule, untouched by the deny rule.
    Row("git status", "shell(git status*)", True, RM, False),
    Row("ls -la src", "shell(ls *)", True, RM, False),
    Row("npm test -- --watch=false", "shell(npm test *)", True, RM, False),
    Row("git log --oneline -5", "shell(git log *)", True, RM, False),
    Row("git diff HEAD~1", "shell(git diff *)", True, RM, False),
    Row("grep -rn 'TODO' src", "shell(grep *)", True, RM, False),
    Row("find . -name '*.py'", "shell(find *)", True, RM, False),
    Row("cat README.md", "shell(cat *)", True, RM, False),
    Row("echo 'hello world'", "shell(echo *)", True, RM, False),
    Row("pytest -q tests/test_x.py", "shell(pytest *)", True, RM, False),
    Row("make build 2>&1", "shell(make *)", True, RM, False),
    Row("git status > /dev/null", "shell(git status*)", True, RM, False),
    Row("python -m pytest -x", "shell(python -m pytest*)", True, RM, False),
    Row("printf '%s\\n' hello", "shell(printf *)", True, RM, False),
    Row("test -f setup.py", "shell(test *)", True, RM, False),
    Row("wc -l < README.md", "shell(wc -l*)", True, RM, False),
    Row("sed -n '1,5p' notes.txt", "shell(sed *)", True, RM, False),
    Row("git commit -m 'rm -rf is dangerous'", "shell(git commit *)", True, RM, False),
    Row("echo rm -f x", "shell(echo *)", True, RM, False),
    Row("grep -rn 'rm -f x' src", "shell(grep *)", True, RM, False),
    Row("git commit -m 'rm x, which nothing reads'", "shell(git commit *)", True, RM, False),
    Row('echo "a \\$HOME b"', "shell(echo *)", True, RM, False),
    Row("ls -la src && git status --short", "shell(ls *)", False, RM, False),
    # Allow rules: each line runs code or writes a file its rule cannot read.
    Row("printf -v 'a[$(touch pwned)]' 1", "shell(printf *)", False, TOUCH, True, CREATES),
    Row("test -v 'a[$(touch pwned)]'", "shell(test *)", False, TOUCH, True, CREATES),
    Row(
        "printf -v a[\\$\\(touch\\ pwned\\)] 1", "shell(printf *)", False, TOUCH, True, CREATES
    ),  # the grammar reads this word as two: bash reads it as one
    Row("[ -v 'a[$(touch pwned)]' ]", "shell([ *)", False, TOUCH, True, CREATES),
    Row("read 'a[$(touch pwned)]' <<< 1", "shell(read *)", False, TOUCH, True, CREATES),
    Row("declare 'a[$(touch pwned)]=1'", "shell(declare *)", False, TOUCH, True, CREATES),
    Row("let 'a[$(touch pwned)]'", "shell(let *)", False, TOUCH, True, CREATES),
    Row("a=(1); unset 'a[$(touch pwned)]'", "shell(*unset *)", False, TOUCH, True, CREATES),
    Row("x='a[$(touch pwned)]'; echo $((x))", "shell(*echo *)", False, TOUCH, True, CREATES),
    Row("echo hi >& pwned", "shell(echo *)", False, TOUCH, False, CREATES),
    Row("echo hi &> pwned", "shell(echo *)", False, TOUCH, False, CREATES),
    Row("echo hi >| pwned", "shell(echo *)", False, TOUCH, False, CREATES),
    Row("echo hi 1>>pwned", "shell(echo *)", False, TOUCH, False, CREATES),
    Row("echo $(touch pwned)", "shell(echo *)", False, TOUCH, True, CREATES),
    Row('echo "${x:-$(touch pwned)}"', "shell(echo *)", False, TOUCH, True, CREATES),
    Row("cat <(touch pwned)", "shell(cat *)", False, TOUCH, True, CREATES),
    Row("git status; touch pwned", "shell(git status*)", False, TOUCH, True, CREATES),
    Row("mapfile -C 'touch pwned; :' -c 1 <<< a", "shell(mapfile *)", False, TOUCH, True, CREATES),
    Row("trap 'touch pwned' EXIT", "shell(trap *)", False, TOUCH, True, CREATES),
    Row("PS4='$(touch pwned)'; set -x; :", "shell(PS4=*)", False, TOUCH, True, CREATES),
    Row("ls $HOME", "shell(ls *)", False, RM, False),
    Row("ls *", "shell(ls *)", False, RM, False),
    Row("ls ~", "shell(ls *)", False, RM, False),
    Row("ls {a,b}", "shell(ls *)", False, RM, False),
    Row("tar cf a.tar *", "shell(tar *)", False, RM, False),
    # Deny rules: each line deletes x; the rule on `rm` must fire, whatever hides it.
    # An allow rule on a wrapper (`timeout *`, `find *`) covers what it runs, as written.
    Row("rm -f x", "shell(rm -f x)", True, RM, True, DELETES),
    Row("/bin/r? -f x", "shell(/bin/r? *)", False, RM, True, DELETES),
    Row("/bin/r[m] -f x", "shell(/bin/r*)", False, RM, True, DELETES),
    Row("{rm,-f,x}", "shell({rm*)", False, RM, True, DELETES),
    Row("r$()m -f x", "shell(r*)", False, RM, True, DELETES),
    Row("X=rm; $X -f x", "shell(*)", True, RM, True, DELETES),
    Row("$(echo rm) -f x", "shell($*)", False, RM, True, DELETES),
    Row("`echo rm` -f x", "shell(`*)", False, RM, True, DELETES),
    Row("$'\\x72m' -f x", "shell($*)", True, RM, True, DELETES),
    Row('"r"m -f x', "shell(*)", True, RM, True, DELETES),
    Row("bash <<< 'rm -f x'", "shell(bash *)", False, RM, True, DELETES),
    Row("sh -s <<< 'rm -f x'", "shell(sh *)", False, RM, True, DELETES),
    Row("dash <<< 'rm -f x'", "shell(dash *)", False, RM, True, DELETES),
    Row("bash <<EOF\nrm -f x\nEOF", "shell(bash*)", False, RM, True, DELETES),
    Row("bash <<'EOF'\nrm -f x\nEOF", "shell(bash*)", False, RM, True, DELETES),
    Row("cat <<'EOF' | sh\nrm -f x\nEOF", "shell(cat*)", False, RM, True, DELETES),
    Row("echo 'rm -f x' | bash", "shell(echo *)", False, RM, True, DELETES),
    Row("bash < <(echo rm -f x)", "shell(bash*)", False, RM, True, DELETES),
    Row("exec 3<<< 'rm -f x'; bash <&3", "shell(exec *)", False, RM, True, DELETES),
    Row("source /dev/stdin <<< 'rm -f x'", "shell(source *)", False, RM, True, DELETES),
    Row(". /dev/stdin <<< 'rm -f x'", "shell(. *)", False, RM, True, DELETES),
    Row("echo 'rm -f x' > s; . ./s", "shell(echo *)", False, RM, True, DELETES),
    Row("printf 'rm -f x' > s.sh; bash s.sh", "shell(printf *)", False, RM, True, DELETES),
    Row("script -qc 'rm -f x' /dev/null", "shell(script *)", False, RM, True, DELETES),
    Row("flock lock -c 'rm -f x'", "shell(flock *)", False, RM, True, DELETES),
    Row("bash -c \"bash -c 'rm -f x'\"", "shell(bash *)", False, RM, True, DELETES),
    Row("busybox sh -c 'rm -f x'", "shell(busybox *)", False, RM, True, DELETES),
    Row("builtin eval 'rm -f x'", "shell(builtin *)", False, RM, True, DELETES),
    Row("trap 'rm -f x' EXIT", "shell(trap *)", False, RM, True, DELETES),
    Row("mapfile -C 'rm -f x; :' -c 1 <<< a", "shell(mapfile *)", False, RM, True, DELETES),
    Row("shopt -s expand_aliases\nalias r='rm -f'\nr x", "shell(*)", True, RM, True, DELETES),
    Row("PS4='$(rm -f x)'; set -x; :", "shell(PS4=*)", False, RM, True, DELETES),
    Row("env -S 'rm -f x'", "shell(env *)", True, RM, True, DELETES),
    Row("echo x | xargs rm -f", "shell(echo *)", False, RM, True, DELETES),
    Row("xargs -a /dev/stdin rm -f <<< x", "shell(xargs *)", True, RM, True, DELETES),
    Row("xargs -I{} sh -c '{}' <<< 'rm -f x'", "shell(xargs *)", False, RM, True, DELETES),
    Row("find . -name x -exec rm -f {} +", "shell(find *)", True, RM, True, DELETES),
    Row(
        "find . -name x -exec sh -c 'rm \"$1\"' _ {} \\;", "shell(find *)", False, RM, True, DELETES
    ),
    Row("timeout 5 rm -f x", "shell(timeout *)", True, RM, True, DELETES),
    Row("time rm -f x", "shell(time *)", True, RM, True, DELETES),
    Row("nice -n 5 rm -f x", "shell(nice *)", True, RM, True, DELETES),
    Row("ionice -c 3 rm -f x", "shell(ionice *)", True, RM, True, DELETES),
    Row("setsid -w rm -f x", "shell(setsid *)", True, RM, True, DELETES),
    # A program no table names may run what its words spell: not proven outside the rule.
    Row("prlimit --nproc=512 rm -f x", "shell(prlimit *)", True, RM, True, DELETES),
    Row("setarch -R rm -f x", "shell(setarch *)", True, RM, True, DELETES),
    Row("sort --compress-program=rm -S 1 big.txt", "shell(sort *)", True, RM, True),
    Row(
        "python3 -c 'import subprocess, sys; subprocess.run(sys.argv[1:])' rm -f x",
        "shell(python3 *)",
        True,
        RM,
        True,
        DELETES,
    ),
    Row("coproc rm -f x; wait", "shell(coproc *)", False, RM, True, DELETES),
    Row("let 'a[$(rm -f x)]'", "shell(let *)", False, RM, True, DELETES),
    Row("declare 'a[$(rm -f x)]=1'", "shell(declare *)", False, RM, True, DELETES),
    Row("f() { rm -f x; }; f", "shell(f*)", False, RM, True, DELETES),
    Row(
        "env 'BASH_FUNC_ls%%=() { rm -f x; }' bash -c ls", "shell(env *)", False, RM, True, DELETES
    ),
    Row("hash -p /bin/rm ls; ls -f x", "shell(hash *)", False, RM, True, DELETES),
    Row("test -v a\\[\\$\\(rm\\ -f\\ x\\)\\]", "shell(test *)", False, RM, True, DELETES),
    Row("test -v 'a['\"\\$(rm -f x)\"']'", "shell(test *)", False, RM, True, DELETES),
    Row("cat < /dev/tcp/127.0.0.1/9", "shell(cat*)", False, RM, False),
    Row("watch -n 1 'rm -f x'", "shell(watch *)", False, RM, True),
    Row("parallel rm -f ::: x", "shell(parallel *)", False, RM, True),
    Row("ssh host 'rm -f x'", "shell(ssh *)", False, RM, True),
    Row("sudo -s <<< 'rm -f x'", "shell(sudo *)", False, RM, True),
    Row("GIT_SSH_COMMAND='rm -f x' git fetch", "shell(GIT_SSH_COMMAND=*)", False, RM, True),
    Row("LD_PRELOAD=./evil.so ls", "shell(LD_PRELOAD=*)", False, RM, True),
    Row("uv run rm -f x", "shell(uv run *)", True, RM, True),
    Row("docker exec box rm -f x", "shell(docker exec *)", True, RM, True),
    Row("uv run pytest -q", "shell(uv run *)", True, RM, False),
    # A here-doc ends at its delimiter with the quotes removed: the lines before it run.
    Row('cat <<E"O"F\nhi\nEOF\nrm -f x\nE"O"F', "shell(cat*)", False, RM, True, DELETES),
    Row("cat <<E'OF'\nhi\nEOF\nrm -f x\nE'OF'", "shell(cat*)", False, RM, True, DELETES),
    Row("cat <<$'EOF'\nhi\nEOF\nrm -f x\n$'EOF'", "shell(cat*)", False, RM, True, DELETES),
    Row("cat <<E\\OF\nhi\nEOF\nrm -f x\nE\\OF", "shell(cat*)", False, RM, True, DELETES),
    Row('cat <<E"O"F\nhi\nEOF\ntouch pwned\nE"O"F', "shell(cat*)", False, TOUCH, True, CREATES),
    Row("cat <<$'EOF'\nhi\nEOF\ntouch pwned\n$'EOF'", "shell(cat*)", False, TOUCH, True, CREATES),
    Row("cat <<'EOF'\nhi\nEOF", "shell(cat*)", True, RM, False),
    # Bash's tables of command names and aliases, set by any means, hide what runs.
    Row("BASH_CMDS[ls]=/bin/rm; ls -f x", ANY, False, RM, True, DELETES),
    Row("BASH_CMDS=([cat]=/bin/rm); cat -f x", ANY, False, RM, True, DELETES),
    Row("declare -A BASH_CMDS=([ls]=/bin/rm); ls -f x", ANY, False, RM, True, DELETES),
    Row("printf -v 'BASH_CMDS[ls]' /bin/rm; ls -f x", ANY, False, RM, True, DELETES),
    Row("read 'BASH_CMDS[ls]' <<< /bin/rm; ls -f x", ANY, False, RM, True, DELETES),
    Row(
        "shopt -s expand_aliases\nBASH_ALIASES[ls]='rm -f'\nls x",
        ANY,
        False,
        RM,
        True,
        DELETES,
    ),
    # An alias makes every later command name unknown.
    Row("shopt -s expand_aliases\nalias echo=\necho rm -f x", ANY, False, RM, True, DELETES),
    Row(
        "shopt -s expand_aliases\nalias cat='command '\ncat rm -f x",
        ANY,
        False,
        RM,
        True,
        DELETES,
    ),
    Row("alias", "shell(alias*)", True, RM, False),
    # Expansions that run code in a value: `@P`, backticks in an operand, `${!x}`.
    Row("x='$(rm -f x)'; echo ${x@P}", ANY, False, RM, True, DELETES),
    Row("x='`rm -f x`'; : \"${x@P}\"", ANY, False, RM, True, DELETES),
    Row("echo ${x:-`rm -f x`}", "shell(echo *)", False, RM, True, DELETES),
    Row('echo "${x-`rm -f x`}"', "shell(echo *)", False, RM, True, DELETES),
    Row("x=1; echo ${x#`rm -f x`}", ANY, False, RM, True, DELETES),
    Row("x=1; echo ${x/`rm -f x`/}", ANY, False, RM, True, DELETES),
    Row("x='a[$(rm -f x)]'; echo ${!x}", ANY, False, RM, True, DELETES),
    Row('echo "${HOME@Q}"', "shell(echo *)", False, RM, False),
    # Subscript code behind a nested `]`, or spelled with escapes.
    Row("let 'a[x[0]+$(rm -f x)]'", "shell(let *)", False, RM, True, DELETES),
    Row("x='a[x[0]+$(rm -f x)]'; echo $((x))", ANY, False, RM, True, DELETES),
    Row("x=$'a\\x5b$(rm -f x)]'; echo $((x))", ANY, False, RM, True, DELETES),
    Row("declare $'a\\x5b$(rm -f x)]=1'", "shell(declare *)", False, RM, True, DELETES),
    Row("declare a\\[\\$\\(rm\\ -f\\ x\\)\\]=1", "shell(declare *)", False, RM, True, DELETES),
    Row("a=(1); unset $'a\\x5b$(rm -f x)]'", ANY, False, RM, True, DELETES),
    Row("printf -v 'a[x[0]+$(touch pwned)]' 1", "shell(printf *)", False, TOUCH, True, CREATES),
    Row("test -v 'a[x[0]+$(touch pwned)]'", "shell(test *)", False, TOUCH, True, CREATES),
    Row("read 'a[x[0]+$(touch pwned)]' <<< 1", "shell(read *)", False, TOUCH, True, CREATES),
    Row("declare 'a[x[0]+$(touch pwned)]=1'", "shell(declare *)", False, TOUCH, True, CREATES),
    Row("declare $'a\\x5b$(touch pwned)]=1'", "shell(declare *)", False, TOUCH, True, CREATES),
    Row(
        "x=$(printf 'a\\x5b$(rm -f x)]'); echo $((x))", ANY, False, RM, True, DELETES
    ),  # a value read at run time, evaluated as arithmetic
    Row("x=$(printf 'a\\x5b$(rm -f x)]'); [[ $x -eq 0 ]]", ANY, False, RM, True, DELETES),
    Row("x='a<$(rm -f x)]'; echo $((${x/</[}))", ANY, False, RM, True, DELETES),
    Row("x='a<$(rm -f x)]'; [[ -v ${x/</[} ]]", ANY, False, RM, True, DELETES),
    Row("y='$(rm -f x)]'; echo $((a[$y))", ANY, False, RM, True, DELETES),
    Row("d=$'\\x24'; p='(rm -f x)]'; echo $((a[$d$p))", ANY, False, RM, True, DELETES),
    Row("n=3; awk '{print $1}' f; echo $((n + 1))", "shell(*[a-z]*)", False, RM, False),
    Row("echo $((1 + 2))", "shell(echo *)", False, RM, False),
    Row("declare 'a['\"\\$(rm -f x)\"']=1'", "shell(declare *)", False, RM, True, DELETES),
    Row("x=1; declare $'a\\x5b'$x'$(rm -f x)]=1'", ANY, False, RM, True, DELETES),
    Row("x=1; declare a\\[$x\\$\\(rm\\ -f\\ x\\)\\]=1", ANY, False, RM, True, DELETES),
    Row("declare a[\\$\\(rm\\ -f\\ x\\)]=1", "shell(declare *)", False, RM, True, DELETES),
    # Wrapper options whose value the option grammar may take for the command.
    Row(
        "timeout --signal KILL 5 bash -c 'true; rm -f x'",
        "shell(timeout *)",
        False,
        RM,
        True,
        DELETES,
    ),
    Row("nice --adjustment 5 bash -c 'true; rm -f x'", "shell(nice *)", False, RM, True, DELETES),
    Row("ionice --class 3 bash -c 'true; rm -f x'", "shell(ionice *)", False, RM, True, DELETES),
    Row("stdbuf --output L bash -c 'true; rm -f x'", "shell(stdbuf *)", False, RM, True, DELETES),
    Row(
        "xargs --max-args 1 bash -c 'true; rm -f x' <<< a",
        "shell(xargs *)",
        False,
        RM,
        True,
        DELETES,
    ),
    Row("exec -la name bash -c 'true; rm -f x'", "shell(exec *)", False, RM, True, DELETES),
    Row("env -iu X bash -c 'true; rm -f x'", "shell(env *)", False, RM, True, DELETES),
    Row("timeout -s KILL 5 echo hi", "shell(timeout *)", True, RM, False),
    Row("unshare -r <<< 'rm -f x'", "shell(unshare *)", False, RM, True),
    Row("timeout 5 fakeroot <<< 'rm -f x'", "shell(timeout *)", False, RM, True, DELETES),
    Row("newgrp <<< 'rm -f x'", "shell(newgrp *)", False, RM, True, DELETES),
    Row("unshare -r ls", "shell(unshare *)", True, RM, False),
    Row("docker exec box bash -c 'true; rm -f x'", "shell(docker exec *)", False, RM, True),
    Row("uv run bash -c 'true; rm -f x'", "shell(uv run *)", False, RM, True),
    Row("eatmydata bash -c 'true; rm -f x'", "shell(eatmydata *)", False, RM, True, DELETES),
    Row("prlimit --nproc=512 sh -c 'true; rm -f x'", "shell(prlimit *)", False, RM, True, DELETES),
    Row("capsh -- -c 'true; rm -f x'", "shell(capsh *)", False, RM, True, DELETES),
    Row("git grep -n bash", "shell(git grep *)", True, RM, False),
    # Bash cuts a $'…' word at its first NUL.
    Row("$'rm\\0zz' -f x", "shell($*)", True, RM, True, DELETES),
    Row("$'rm\\c@' -f x", "shell($*)", True, RM, True, DELETES),
    Row("command $'rm\\x00' -f x", "shell(command *)", True, RM, True, DELETES),
    Row("$'rm\\u0000z' -f x", "shell($*)", True, RM, True, DELETES),
    Row("$'\\162\\155' -f x", "shell($*)", True, RM, True, DELETES),
    # A code variable set by a command rather than an assignment.
    Row("printf -v PS4 %s '$(rm -f x)'; set -x; :", "shell(printf *)", False, RM, True, DELETES),
    Row("read -r PS4 <<< '$(rm -f x)'; set -x; :", "shell(read *)", False, RM, True, DELETES),
    Row("declare -n r=PS4; r='$(rm -f x)'; set -x; :", ANY, False, RM, True, DELETES),
    Row(
        "mapfile -t PROMPT_COMMAND <<< 'rm -f x'; bash -ic :",
        "shell(mapfile *)",
        False,
        RM,
        True,
    ),
    Row("printf -v x %s hi; echo $x", "shell(printf *)", False, RM, False),
    Row("unset PS4; : ${PS4='$(rm -f x)'}; set -x; :", ANY, False, RM, True, DELETES),
    Row(": ${BASH_CMDS[ls]=/bin/rm}; ls -f x", ANY, False, RM, True, DELETES),
    Row("for PS4 in '$(rm -f x)'; do set -x; :; done", ANY, False, RM, True, DELETES),
    Row("builtin export PS4='$(rm -f x)'; set -x; :", ANY, False, RM, True, DELETES),
    Row("command declare PS4='$(rm -f x)'; set -x; :", ANY, False, RM, True, DELETES),
    Row("declare -n r; r=PS4; r='$(rm -f x)'; set -x; :", ANY, False, RM, True, DELETES),
    Row("x=$(git rev-parse HEAD); echo $x", "shell(echo *)", False, RM, False),
    Row("for f in *.py; do echo $f; done", "shell(echo *)", False, RM, False),
    Row("printf '%s\\n' PS4", "shell(printf *)", True, RM, False),
    Row("export FOO BAR=1; local x", ANY, True, RM, False),
    Row("for i in 1 2; do echo $((i * 2)); done", "shell(echo *)", False, RM, False),
    # A name or an arithmetic operand whose value is only known at run time.
    Row("a=(1); x=$(printf 'a\\x5b$(rm -f x)]'); unset \"$x\"", ANY, False, RM, True, DELETES),
    Row("a=(1); unset \"$(printf 'a\\x5b$(rm -f x)]')\"", ANY, False, RM, True, DELETES),
    Row("x=$(printf 'a\\x5b$(rm -f x)]'); a=([x]=1)", ANY, False, RM, True, DELETES),
    Row("test -v \"$(printf 'a\\x5b$(rm -f x)]')\"", ANY, False, RM, True, DELETES),
    Row("echo $(( $(printf 'a\\x5b$(rm -f x)]') ))", ANY, False, RM, True, DELETES),
    Row("x=$(printf 'a\\x5b$(rm -f x)]'); declare -i y; y=x", ANY, False, RM, True, DELETES),
    Row("x=$(printf 'a\\x5b$(rm -f x)]'); s=abc; echo ${s:x}", ANY, False, RM, True, DELETES),
    Row("printf 'rm -f x' > 0; chmod +x 0; ((BASH_CMDS[ls]=0)); ls", ANY, False, RM, True, DELETES),
    Row(
        "printf 'rm -f x' > 0; chmod +x 0; let 'BASH_CMDS[ls]=0'; ls",
        ANY,
        False,
        RM,
        True,
        DELETES,
    ),
    Row(
        "git init -q; GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0='!rm -f x' "
        "git st",
        ANY,
        False,
        RM,
        True,
        DELETES,
    ),
    Row("SYSTEMD_PAGER='rm -f x' systemctl status", "shell(SYSTEMD_PAGER=*)", False, RM, True),
    Row("echo $((1 + PS4))", "shell(echo *)", False, RM, True),
    Row("env -S'bash -c \"true; rm -f x\"'", "shell(env *)", False, RM, True, DELETES),
    # `sudo -s CMD` and `sudo -i CMD` run CMD through `$SHELL -c`.
    Row("sudo -s 'true; rm -f x'", "shell(sudo *)", False, RM, True),
    Row("sudo -i 'cd .; rm -f x'", "shell(sudo *)", False, RM, True),
]


def test_the_table_has_sixty_lines_and_both_kinds() -> None:
    assert len(ROWS) >= 60
    assert any(row.allowed for row in ROWS)
    assert any(row.denied for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[row.line[:40] for row in ROWS])
def test_each_line_against_an_allow_and_a_deny_rule(row: Row) -> None:
    allow = Policy(allow=(row.allow,)).judge("shell", {"command": row.line}, needs_consent=True)
    deny = Policy(deny=(row.deny,)).judge("shell", {"command": row.line}, needs_consent=True)

    assert allow.verdict is (Verdict.ALLOW if row.allowed else Verdict.ASK), allow
    assert (deny.verdict is Verdict.DENY) is row.denied, deny


#: Programs some rows run that a minimal system may lack.
OPTIONAL_PROGRAMS = (
    "script", "flock", "busybox", "dash", "setsid", "ionice", "prlimit", "setarch", "eatmydata",
    "capsh", "uv",
)  # fmt: skip
EFFECTS = [row for row in ROWS if row.effect is not None]


@pytest.mark.parametrize("row", EFFECTS, ids=[row.line[:40] for row in EFFECTS])
def test_each_hostile_line_really_does_what_the_table_says(row: Row, tmp_path: Path) -> None:
    missing = [name for name in OPTIONAL_PROGRAMS if name in row.line and not shutil.which(name)]
    if missing:
        pytest.skip(f"{missing[0]} is not installed here")
    (tmp_path / "x").touch()
    subprocess.run(
        ["bash", "-c", row.line], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
        timeout=RUN_TIMEOUT, check=False,
    )  # fmt: skip
    if row.effect == DELETES:
        assert not (tmp_path / "x").exists()
    else:
        assert (tmp_path / "pwned").exists()
