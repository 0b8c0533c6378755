"""The permission policy: which tool calls run, which need consent, which never run.

A rule is a tool name glob, optionally with a glob on the call's main argument:
`read_file`, `mcp__docs__*`, `shell(git status*)`, `write_file(docs/*)`. Deny rules
win over allow rules; a call no rule names asks for consent if its tool wants it.
The policy judges the arguments the model asked for: a hook's rewrite is not judged
again (see docs/runtime.md, "Permissions judge the model's arguments").
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

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
}
_RULE = re.compile(r"^(?P<tool>[^()]+?)\s*(?:\((?P<argument>.*)\))?$")


class Verdict(Enum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    rule: str | None = None


@dataclass(frozen=True)
class Policy:
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    project_dir: Path = Path()
    """Where relative paths, in rules and in the model's arguments, start."""

    def judge(self, tool: str, arguments: Mapping[str, Any], *, needs_consent: bool) -> Decision:
        """The verdict on one call, from the model's own `arguments`."""
        for rule in self.deny:
            if rule_matches(rule, tool, arguments, self.project_dir):
                return Decision(Verdict.DENY, rule)
        for rule in self.allow:
            if rule_matches(rule, tool, arguments, self.project_dir):
                return Decision(Verdict.ALLOW, rule)
        return Decision(Verdict.ASK if needs_consent else Verdict.ALLOW)


def rule_matches(
    rule: str, tool: str, arguments: Mapping[str, Any], project_dir: Path = Path()
) -> bool:
    match = _RULE.match(rule.strip())
    if match is None or not fnmatch.fnmatchcase(tool, match["tool"]):
        return False
    pattern = match["argument"]
    if pattern is None:
        return True
    value = arguments.get(MAIN_ARGUMENT.get(tool, ""), None)
    if tool in PATH_RULE_TOOLS:  # judged on the file the path reaches, not its spelling
        return path_rule_matches(pattern, value, project_dir)
    return isinstance(value, str) and fnmatch.fnmatchcase(value, pattern)
