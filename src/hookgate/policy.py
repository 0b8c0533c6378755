"""The permission policy: which tool calls run, which need consent, which never run.

A rule is a tool name glob, optionally with a glob on the call's main argument:
`read_file`, `mcp__docs__*`, `shell(git status*)`, `write_file(docs/*)`. Deny rules
win over allow rules; a call no rule names asks for consent if its tool wants it.
A `shell(…)` rule is judged on each command of the line (see `hookgate.shellwords`).
The policy judges the arguments the model asked for: a hook's rewrite is not judged
again (see docs/runtime.md, "Permissions judge the model's arguments").
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from hookgate.shellwords import CommandLine, ShellCommand, parse_command_line, rough_forms
from hookgate.tools.paths import PATH_RULE_TOOLS, path_rule_matches

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
_RULE = re.compile(r"^(?P<tool>[^()]+?)\s*(?:\((?P<argument>.*)\))?$", re.DOTALL)


class Verdict(Enum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


class Decision(NamedTuple):
    verdict: Verdict
    rule: str | None = None


class Rule(NamedTuple):
    """One `tool(pattern)` rule, split once."""

    text: str
    tool: str
    pattern: str | None

    @classmethod
    def parse(cls, text: str) -> Rule | None:
        match = _RULE.match(text.strip())
        return None if match is None else cls(text, match["tool"], match["argument"])

    def names(self, tool: str) -> bool:
        return fnmatch.fnmatchcase(tool, self.tool)


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
            return _judge_command_line(value, deny, allow, needs_consent=needs_consent)
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
            named = _denies(rule.pattern, value, parse_command_line(value))
        else:
            named = _matches(rule, tool, value, policy.project_dir, denying=True)
        if named:
            return Decision(Verdict.ASK, rule.text)
    return None


def rules_allowing(tool: str, arguments: Mapping[str, Any]) -> tuple[str, ...]:
    """The narrowest allow rules under which this exact call runs without consent.

    One rule per command of a shell line; none for a line no narrow rule can cover
    (a redirect that writes, a command only known when it runs, an unreadable line):
    only `shell` itself would, and that is no advice to give.
    """
    value = arguments.get(MAIN_ARGUMENT.get(tool, ""), None)
    if tool in SHELL_TOOLS and isinstance(value, str):
        parsed = parse_command_line(value)
        if parsed is None or not parsed.simple or not parsed.commands:
            return ()
        if any(not command.known or command.writes for command in parsed.commands):
            return ()
        written = dict.fromkeys(command.written for command in parsed.commands)
        return tuple(f"{tool}({_literal(text)})" for text in written)
    return (f"{tool}({_literal(value)})",) if isinstance(value, str) else (tool,)


def _literal(text: str) -> str:
    """`text` as a glob that matches itself alone."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _rules(texts: tuple[str, ...], tool: str) -> list[Rule]:
    parsed = (Rule.parse(text) for text in texts)
    return [rule for rule in parsed if rule is not None and rule.names(tool)]


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
    line: str, deny: list[Rule], allow: list[Rule], *, needs_consent: bool
) -> Decision:
    """Deny if a rule matches any command; allow only if rules cover every command."""
    parsed = parse_command_line(line)
    for rule in deny:
        if rule.pattern is None or _denies(rule.pattern, line, parsed):
            return Decision(Verdict.DENY, rule.text)
    everything = next((rule.text for rule in allow if rule.pattern in (None, "*")), None)
    if everything is not None:  # `shell` or `shell(*)` allows every line
        return Decision(Verdict.ALLOW, everything)
    if parsed is not None and parsed.simple and parsed.commands:
        covering = [_covering(command, allow) for command in parsed.commands]
        if all(covering):
            return Decision(Verdict.ALLOW, ", ".join(dict.fromkeys(r for r in covering if r)))
    return Decision(Verdict.ASK if needs_consent else Verdict.ALLOW)


def _denies(pattern: str, line: str, parsed: CommandLine | None) -> bool:
    """Whether `pattern` matches, or could match, a command of `line`."""
    if fnmatch.fnmatchcase(line.strip(), pattern):
        return True
    if parsed is None:  # unreadable: denied wherever the rule could match
        forms = rough_forms(line)
        return forms is None or any(fnmatch.fnmatchcase(form, pattern) for form in forms)
    for command in parsed.commands:
        if not command.known:  # `$CMD x` could be anything, this rule's command too
            return True
        if any(fnmatch.fnmatchcase(form, pattern) for form in command.forms):
            return True
    return False


def _covering(command: ShellCommand, allow: list[Rule]) -> str | None:
    """The allow rule that covers `command` as written, if any."""
    if not command.known or command.writes:
        return None
    for rule in allow:
        if rule.pattern is not None and fnmatch.fnmatchcase(command.written, rule.pattern):
            return rule.text
    return None
