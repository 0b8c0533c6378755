"""The permission policy: which tool calls run, which need consent, which never run.

A rule is a tool name glob, optionally with a glob on the call's main argument:
`read_file`, `mcp__docs__*`, `shell(git status*)`, `write_file(docs/*)`. Deny rules
win over allow rules; a call no rule names asks for consent if its tool wants it.
A `shell(…)` rule is judged on each command of the line (see `hookgate.hooks.shell.words`):
an allow rule covers only commands it can read whole, and a deny rule fires on every
command it cannot prove outside it (one built or fed at run time), saying why; path
deny rules also judge the files a shell redirect reads and writes.
The policy judges the arguments the model asked for: a hook's rewrite is not judged
again (see docs/runtime.md, "Permissions judge the model's arguments").
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hookgate.config.ruletext import Rule
from hookgate.hooks.records import NamedTuple
from hookgate.tools.paths import PATH_RULE_TOOLS, path_rule_matches

if TYPE_CHECKING:
    from hookgate.hooks.shell.words import CommandLine, ShellCommand


def parse_command_line(line: str) -> CommandLine | None:
    """The shell's reading of `line` (`hookgate.hooks.shell.words`), imported for the
    first shell call judged: a session that makes none does not load the parser."""
    from hookgate.hooks.shell.words import parse_command_line as parse

    return parse(line)


#: The argument a `tool(pattern)` rule is matched against, per tool.
MAIN_ARGUMENT = {
    "shell": "command",
    "read_file": "path",
    "write_file": "path",
    "edit_file": "path",
    "list_files": "pattern",
    "grep": "pattern",
    "ask_agent": "agent",
    "web_fetch": "url",
}
#: Tools whose main argument is a shell command line.
SHELL_TOOLS = frozenset({"shell"})
#: `web_fetch(domain:HOST)`: a rule on the URL's host (a glob), not on the URL.
DOMAIN_PREFIX = "domain:"
#: Why no rule can judge a line the grammar cannot read.
UNREADABLE = "hookgate cannot read this command line as bash would"
#: Why no allow rule covers a line with control structures.
NOT_SIMPLE = "it has control structures (if, loops, case, functions, [ ] or [[ ]])"


class Verdict(Enum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


class Decision(NamedTuple):
    verdict: Verdict
    rule: str | None = None
    reason: str | None = None
    """Why a deny rule fired where the line does not say it plainly (a command it cannot
    read, one inside another's code, a file a redirect opens), or why the allow rules
    did not cover the call; None: the rule matched as written, or no rule was in play."""


class Policy(NamedTuple):
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    project_dir: Path = Path()
    """Where relative paths, in rules and in the model's arguments, start."""
    ask: tuple[str, ...] = ()
    """Rules that force consent: an ASK decision naming its rule, whatever allows it."""

    def judge(self, tool: str, arguments: Mapping[str, Any], *, needs_consent: bool) -> Decision:
        """The verdict on one call, from the model's own `arguments`: a deny rule, else an
        ask rule (judged as a deny rule is: every command of a line, every name of a
        path), else the allow rules."""
        decision = self._judge_deny_allow(tool, arguments, needs_consent=needs_consent)
        if decision.verdict is Verdict.DENY:
            return decision
        return _asked(self, tool, arguments) or decision

    def _judge_deny_allow(
        self, tool: str, arguments: Mapping[str, Any], *, needs_consent: bool
    ) -> Decision:
        """The verdict on one call, from the model's own `arguments`."""
        value = arguments.get(MAIN_ARGUMENT.get(tool, ""), None)
        deny = _rules(self.deny, tool)
        allow = _rules(self.allow, tool)
        if tool in SHELL_TOOLS and isinstance(value, str):
            parsed = parse_command_line(value)
            files = {kind: _rules(self.deny, kind) for kind in PATH_RULE_TOOLS}
            decision = _judge_command_line(value, parsed, deny, allow, needs_consent=needs_consent)
            if decision.verdict is Verdict.DENY:
                return decision
            return _judge_redirects(parsed, files, self.project_dir) or decision
        for rule in deny:
            if _matches(rule, tool, value, self.project_dir, denying=True):
                return Decision(Verdict.DENY, rule.text)
        for rule in allow:
            if _matches(rule, tool, value, self.project_dir):
                return Decision(Verdict.ALLOW, rule.text)
        return Decision(Verdict.ASK if needs_consent else Verdict.ALLOW)


def _asked(policy: Policy, tool: str, arguments: Mapping[str, Any]) -> Decision | None:
    """ASK with the first ask rule that names this call, if one does."""
    value = arguments.get(MAIN_ARGUMENT.get(tool, ""), None)
    for rule in _rules(policy.ask, tool):
        if tool in SHELL_TOOLS and isinstance(value, str) and rule.pattern is not None:
            named, _ = _denies(rule.pattern, value, parse_command_line(value))
        else:
            named = _matches(rule, tool, value, policy.project_dir, denying=True)
        if named:
            return Decision(Verdict.ASK, rule.text)
    return None


def rules_allowing(tool: str, arguments: Mapping[str, Any]) -> tuple[str, ...]:
    """The narrowest allow rules under which this exact call runs without consent.

    One rule per command of a shell line; none for a line no narrow rule can cover
    (`why_no_rule_covers` says why): only `shell` itself would, and that is no advice.
    """
    value = arguments.get(MAIN_ARGUMENT.get(tool, ""), None)
    if tool in SHELL_TOOLS and isinstance(value, str):
        parsed = parse_command_line(value)
        if _uncoverable(parsed) is not None or parsed is None:
            return ()
        written = dict.fromkeys(command.written for command in parsed.commands)
        return tuple(f"{tool}({_literal(text)})" for text in written)
    return (f"{tool}({_literal(value)})",) if isinstance(value, str) else (tool,)


def why_no_rule_covers(tool: str, arguments: Mapping[str, Any]) -> str | None:
    """Why no allow rule narrower than `shell` covers this shell call; None if one can."""
    value = arguments.get(MAIN_ARGUMENT.get(tool, ""), None)
    if tool not in SHELL_TOOLS or not isinstance(value, str):
        return None
    return _uncoverable(parse_command_line(value))


def _uncoverable(parsed: CommandLine | None) -> str | None:
    if parsed is None:
        return UNREADABLE
    if not parsed.simple:
        return NOT_SIMPLE
    if not parsed.commands:
        return "it runs no command a rule can name"
    return next((c.opaque for c in parsed.commands if c.opaque is not None), None)


def _literal(text: str) -> str:
    """`text` as a glob that matches itself alone."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _rules(texts: tuple[str, ...], tool: str) -> list[Rule]:
    parsed = (_parsed(text) for text in texts)
    return [rule for rule in parsed if rule is not None and rule.names(tool)]


@functools.lru_cache(maxsize=1024)  # a session judges every call against the same rules
def _parsed(text: str) -> Rule | None:
    return Rule.parse(text)


def _matches(
    rule: Rule, tool: str, value: object, project_dir: Path, *, denying: bool = False
) -> bool:
    if rule.pattern is None:
        return True
    if tool in PATH_RULE_TOOLS:  # a deny rule: every name of the file; an allow: the file
        return path_rule_matches(rule.pattern, value, project_dir, denying=denying)
    if tool == "web_fetch" and rule.pattern.startswith(DOMAIN_PREFIX):
        return _host_matches(rule.pattern.removeprefix(DOMAIN_PREFIX), value)
    return isinstance(value, str) and fnmatch.fnmatchcase(value, rule.pattern)


def _host_matches(pattern: str, url: object) -> bool:
    """Whether the host `url` names matches the glob `pattern` (`web_fetch(domain:…)`)."""
    if not isinstance(url, str):
        return False
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return False
    return host is not None and fnmatch.fnmatchcase(host.rstrip("."), pattern.lower())


def _judge_command_line(
    line: str,
    parsed: CommandLine | None,
    deny: list[Rule],
    allow: list[Rule],
    *,
    needs_consent: bool,
) -> Decision:
    """Deny if a rule could match any command; allow only if rules cover every command."""
    for rule in deny:
        denied, why = (True, None) if rule.pattern is None else _denies(rule.pattern, line, parsed)
        if denied:
            return Decision(Verdict.DENY, rule.text, why)
    everything = next((rule.text for rule in allow if rule.pattern in (None, "*")), None)
    if everything is not None:  # `shell` or `shell(*)` allows every line
        return Decision(Verdict.ALLOW, everything)
    why = _uncoverable(parsed)
    if why is None and parsed is not None:
        covering = [_covering(command, allow) for command in parsed.commands]
        if all(covering):
            return Decision(Verdict.ALLOW, ", ".join(dict.fromkeys(r for r in covering if r)))
    return Decision(Verdict.ASK if needs_consent else Verdict.ALLOW, None, why if allow else None)


def _judge_redirects(
    parsed: CommandLine | None, deny: Mapping[str, list[Rule]], project_dir: Path
) -> Decision | None:
    """A deny on a file a redirect reads or writes, where a path rule names it:
    `read_file(secrets/*)` denies `cat < secrets/key` (relative to the project)."""
    for command in parsed.commands if parsed is not None else ():
        for kind, path in command.redirected:
            tools = ("read_file",) if kind == "read" else ("write_file", "edit_file")
            for rule in (rule for tool in tools for rule in deny[tool]):
                if rule.pattern is None or path_rule_matches(
                    rule.pattern, path, project_dir, denying=True
                ):
                    return Decision(
                        Verdict.DENY, rule.text, f"it {kind}s {path} through a redirect"
                    )
    return None


def _denies(pattern: str, line: str, parsed: CommandLine | None) -> tuple[bool, str | None]:
    """Whether `pattern` matches, or could match, a command of `line`, and why it could."""
    if fnmatch.fnmatchcase(line.strip(), pattern):
        return True, None
    if parsed is None:  # unreadable: whatever it runs could match
        return True, UNREADABLE
    for command in parsed.commands:
        if any(fnmatch.fnmatchcase(form, pattern) for form in command.forms):
            # Named where the line hid it: the model and the user see what fired.
            inside = f"it runs {command.written} inside {command.inside}"
            return True, None if command.inside is None else inside
    hidden = next((c.hidden for c in parsed.commands if c.hidden is not None), None)
    return hidden is not None, hidden


def _covering(command: ShellCommand, allow: list[Rule]) -> str | None:
    """The allow rule that covers `command` as written, if any."""
    if command.opaque is not None:
        return None
    for rule in allow:
        if rule.pattern is not None and fnmatch.fnmatchcase(command.written, rule.pattern):
            return rule.text
    return None
