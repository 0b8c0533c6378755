"""The command-line splitter and the shell rules built on it, without a turn around them.

Properties hold for any command built from plain words; the examples pin down each
way a hostile model hides a command from a rule written for the first one.
"""

from __future__ import annotations

import shlex
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookgate.hooks.shell.literal import ansi_c_value
from hookgate.hooks.shell.words import MAX_LINE, MAX_WRAPPED_FORMS, parse_command_line
from hookgate.security.policy import Policy, Verdict

words = st.text("abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=8).filter(
    lambda word: not word.startswith("-")
)
names = st.sampled_from(["ls", "cat", "git", "grep", "touch", "rm", "mkdir", "echo"])
commands = st.builds(lambda name, args: " ".join([name, *args]), names, st.lists(words, max_size=4))
operators = st.sampled_from([";", " && ", " || ", " | ", " & ", "\n"])
wrappers = st.sampled_from(
    ["command", "builtin", "exec", "env X=1", "nice -n 5", "nohup", "time", "sudo -u root",
     "timeout 5", "X=1", "\\", "/bin/", "/usr/local/bin/"]
)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(operators, commands), min_size=1, max_size=6),
    st.sampled_from(["", ";", " &", "\n"]),
)
def test_every_command_of_a_list_is_found_in_order(parts: list[tuple[str, str]], end: str) -> None:
    line = "".join(operator + command for operator, command in parts)[len(parts[0][0]) :] + end

    parsed = parse_command_line(line)

    # Never a wrong split: the commands, or unreadable where the grammar misreads a
    # newline (it then asks, and deny rules match every run of words).
    if parsed is None:
        assert "\n" in line
        return
    assert parsed.simple
    assert [c.written for c in parsed.commands] == [command for _, command in parts]


@settings(max_examples=100, deadline=None)
@given(command=commands, wrapper=wrappers, quote=st.booleans())
def test_a_wrapped_or_quoted_command_runs_as_itself(
    command: str, wrapper: str, quote: bool
) -> None:
    name, _, rest = command.partition(" ")
    written_name = shlex.quote(name) if quote else name
    glue = "" if wrapper in ("\\", "/bin/", "/usr/local/bin/") else " "
    line = f"{wrapper}{glue}{written_name} {rest}".strip()

    parsed = parse_command_line(line)

    assert parsed is not None
    assert command.strip() in parsed.commands[-1].forms


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_parses_or_is_unreadable_never_an_error(line: str) -> None:
    parsed = parse_command_line(line)
    assert parsed is None or all(isinstance(c.written, str) for c in parsed.commands)


@pytest.mark.parametrize(
    ("line", "inner"),
    [
        ("echo $(rm a)", "rm a"),
        ("echo `rm a`", "rm a"),
        ('echo "$(rm a)"', "rm a"),
        ("cat <(rm a)", "rm a"),
        ("(rm a)", "rm a"),
        ("{ rm a; }", "rm a"),
        ("bash -c 'ls; rm a'", "rm a"),
        ("sh -ec \"rm a\"", "rm a"),
        ("eval 'rm a'", "rm a"),
        ("x=$(rm a)", "rm a"),
        ("echo ${x:-$(rm a)}", "rm a"),
        ("! rm a", "rm a"),
        ("sudo bash -c 'rm a'", "rm a"),
        ("ls `echo \\`rm a\\``", "rm a"),
        ("r\\\nm a", "rm a"),
        ("find . -exec /bin/rm a {} +", "rm a {}"),
        ("su -c 'rm a' root", "rm a"),
    ],
)  # fmt: skip
def test_commands_inside_substitutions_groups_and_shells_are_found(line: str, inner: str) -> None:
    parsed = parse_command_line(line)
    assert parsed is not None
    assert any(inner in c.forms for c in parsed.commands)


@pytest.mark.parametrize("line", ["$CMD a", '"$X" a', "$(echo rm) a", 'bash -c "$X"', "eval $X"])
def test_a_command_known_only_when_it_runs_is_unknown(line: str) -> None:
    parsed = parse_command_line(line)
    assert parsed is not None
    assert not all(c.known for c in parsed.commands)


@pytest.mark.parametrize(
    "line",
    ["echo " + "$(echo " * 2000 + "x" + ")" * 2000, "ls " + "a " * MAX_LINE, "ls 'a " + "b " * 600],
)
def test_a_line_too_deep_or_too_long_asks_and_any_deny_rule_fires(line: str) -> None:
    assert RULES.judge("shell", {"command": line}, needs_consent=True).verdict is Verdict.DENY
    allow_all_ls = Policy(allow=("shell(ls *)", "shell(echo *)"))
    assert allow_all_ls.judge("shell", {"command": line}, needs_consent=True).verdict is Verdict.ASK


def test_a_wrapper_chain_past_the_limit_is_unknown() -> None:
    parsed = parse_command_line("nohup " * (MAX_WRAPPED_FORMS + 1) + "rm a")
    assert parsed is not None
    assert not parsed.commands[0].known


@pytest.mark.parametrize(
    ("line", "writes"),
    [("ls > out", True), ("ls >> out", True), ("ls &> out", True), ("{ ls; } > out", True),
     ("ls 2>&1", False), ("ls > /dev/null", False), ("ls < in", False), ("ls >& out", True),
     ("ls >| out", True), ("ls 2>&-", False)],
)  # fmt: skip
def test_a_redirect_that_writes_a_file_is_seen(line: str, writes: bool) -> None:
    parsed = parse_command_line(line)
    assert parsed is not None
    opaque = parsed.commands[0].opaque
    assert (opaque is not None and "writes to a file" in opaque) is writes


def test_an_unterminated_quote_does_not_parse() -> None:
    assert parse_command_line("rm 'a") is None


def test_a_newline_the_grammar_reads_past_makes_the_line_unreadable() -> None:
    assert parse_command_line("ls | ls | ls\nrm x && ls") is None
    decision = RULES.judge("shell", {"command": "ls | ls | ls\nrm x && ls"}, needs_consent=True)
    assert decision.verdict is Verdict.DENY


RULES = Policy(allow=("shell(git status*)", "shell(ls *)", "shell(ls)"), deny=("shell(rm *)",))


@pytest.mark.parametrize(
    ("line", "verdict"),
    [
        ("git status", Verdict.ALLOW),
        ("ls -la && git status --short", Verdict.ALLOW),
        ("git status; id > pwned", Verdict.ASK),
        ("ls > listing", Verdict.ASK),
        ("if true; then ls; fi", Verdict.ASK),
        ("PATH=/tmp/evil; git status", Verdict.ASK),
        ("LD_PRELOAD=x.so git status", Verdict.DENY),  # the library could run `rm a`
        ("ls 'a", Verdict.DENY),  # unreadable: what it runs could be `rm a`
        ("ls; rm a", Verdict.DENY),
        ("ls 'a; rm b", Verdict.DENY),  # unreadable, and a deny rule could match it
        ("$CMD a", Verdict.DENY),  # could be `rm a`
        ("echo rm a", Verdict.ASK),  # an argument is not a command
        ("git commit -m 'rm a'", Verdict.ASK),
    ],
)  # fmt: skip
def test_the_policy_judges_every_command(line: str, verdict: Verdict) -> None:
    decision = RULES.judge("shell", {"command": line}, needs_consent=True)
    assert decision.verdict is verdict


def test_an_allowed_line_names_the_rules_that_cover_it() -> None:
    decision = RULES.judge("shell", {"command": "ls; git status"}, needs_consent=True)
    assert decision.rule == "shell(ls), shell(git status*)"


@pytest.mark.parametrize("rule", ["shell", "shell(*)"])
def test_a_rule_for_every_shell_call_still_allows_every_line(rule: str) -> None:
    policy = Policy(allow=(rule,), deny=("shell(rm *)",))
    for line in ("ls > out", "if true; then ls; fi", "ls $HOME"):
        assert policy.judge("shell", {"command": line}, needs_consent=True).verdict is Verdict.ALLOW
    assert policy.judge("shell", {"command": "a; rm b"}, needs_consent=True).verdict is Verdict.DENY


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(operators, commands), min_size=1, max_size=5))
def test_a_line_of_plain_commands_is_allowed_by_their_rules_and_denied_only_for_rm(
    parts: list[tuple[str, str]],
) -> None:
    line = "".join(operator + command for operator, command in parts)[len(parts[0][0]) :]
    names = {command.split()[0] for _, command in parts}
    rules = tuple(f"shell({name}*)" for name in names)

    allowed = Policy(allow=rules).judge("shell", {"command": line}, needs_consent=True)
    denied = Policy(deny=("shell(rm *)",)).judge("shell", {"command": line}, needs_consent=True)

    # Plain words hide nothing: a rule per command covers the line, and a deny rule fires
    # only where its command is there (or the grammar misread a newline: then it fires).
    if parse_command_line(line) is not None:
        assert allowed.verdict is Verdict.ALLOW
        if any(command.startswith("rm ") for _, command in parts):
            assert denied.verdict is Verdict.DENY
        if denied.verdict is Verdict.DENY:  # never a line without `rm` (`rm && ls` matches)
            assert any(command.split()[0] == "rm" for _, command in parts)


#: Pieces of a `$'…'` body: every escape form bash reads there, and plain characters.
ansi_c_pieces = st.one_of(
    st.sampled_from([
        "\\0", "\\00", "\\000", "\\7", "\\777", "\\x", "\\x0", "\\x00", "\\x7", "\\x41",
        "\\xff", "\\u", "\\u0", "\\u41", "\\u0041", "\\u00e9", "\\U", "\\U0", "\\U00000041",
        "\\c", "\\c@", "\\cA", "\\cz", "\\c?", "\\c\\\\", "\\e", "\\E", "\\a", "\\b", "\\f",
        "\\n", "\\r", "\\t", "\\v", "\\\\", "\\'", '\\"', "\\?", "\\q", "\\ ",
    ]),
    st.text("rmabz019 -", min_size=1, max_size=3),
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.lists(ansi_c_pieces, min_size=1, max_size=5))
def test_an_ansi_c_string_reads_as_bash_expands_it(pieces: list[str]) -> None:
    body = "".join(pieces)
    done = subprocess.run(
        ["bash", "-c", f"printf %s $'{body}'"], capture_output=True, check=True,
        env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip

    value = ansi_c_value(body)

    # Exactly bash's bytes, cut at a NUL; or unknown, where bash's answer hangs on more.
    assert value is None or value.encode("latin-1") == done.stdout, (body, value)


#: Wrappers with option spellings their programs accept, some of which the tables
#: cannot settle (a long option's value as a separate word, combined short options).
wrapper_spellings = st.sampled_from([
    "timeout 5", "timeout -s KILL 5", "timeout --signal KILL 5", "timeout --signal=KILL 5",
    "timeout -k 1 5", "timeout --kill-after 1 5", "timeout -sKILL 5", "nice", "nice -n 5",
    "nice --adjustment 5", "nice -5", "ionice -c 3", "ionice --class 3", "ionice -t -c 3",
    "stdbuf -oL", "stdbuf -o L", "stdbuf --output L", "env", "env -i", "env -iu X",
    "env --unset X", "env -", "env A=1", "env -C .", "xargs -a /dev/null",
    "xargs --max-args 1 -a /dev/null", "xargs -n1 -a /dev/null", "exec -a n", "exec -la n",
    "command -p", "nohup --", "setsid -w", "taskset -c 0", "time -p", "sudo -E",
    "sudo --user root", "sudo -u root -H", "unshare -r", "unshare --user",
])  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(wrapper_spellings, min_size=1, max_size=3))
def test_a_shell_behind_any_reading_of_wrapper_options_is_judged(chain: list[str]) -> None:
    line = " ".join([*chain, "bash -c 'true; rm -f x'"])

    decision = Policy(deny=("shell(rm *)",)).judge("shell", {"command": line}, needs_consent=True)

    assert decision.verdict is Verdict.DENY, line
