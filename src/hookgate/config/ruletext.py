"""A permission rule as written: `tool` or `tool(pattern)`, split once, and why a text
that is neither is no rule. Imports nothing of the runtime: validating an agent file
must not load the policy and the shell parser behind it.
"""

from __future__ import annotations

import fnmatch
import re

from hookgate.hooks.records import NamedTuple

#: A rule: a tool name or glob, then its argument in parentheses. A pattern, compiled
#: (and cached) by `re` at its first use: not by every command that imports this.
_RULE = r"^(?P<tool>[^()]+?)\s*(?:\((?P<argument>.*)\))?$"


class Rule(NamedTuple):
    """One `tool(pattern)` rule, split once."""

    text: str
    tool: str
    pattern: str | None

    @classmethod
    def parse(cls, text: str) -> Rule | None:
        match = re.match(_RULE, text.strip(), re.DOTALL)
        return None if match is None else cls(text, match["tool"], match["argument"])

    def names(self, tool: str) -> bool:
        return fnmatch.fnmatchcase(tool, self.tool)


#: How a rule is written, for an error about one that is not.
RULE_SHAPE = "a tool name, or a tool name and a pattern in parentheses: shell(git status*)"


def rule_problem(text: str) -> str | None:
    """Why `text` is not a rule (`shell(sudo *` lacks its `)`); None when it is one."""
    if Rule.parse(text) is not None:
        return None
    if text.count("(") != text.count(")"):
        return "its parentheses do not close"
    return "it is not " + RULE_SHAPE.split(":")[0]
