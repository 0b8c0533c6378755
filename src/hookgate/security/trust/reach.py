"""What an agent file lets the model do beyond asking, in plain words, for the summary.

Each setting that widens the model's reach (an allow rule, `yolo`, `workspace.dirs`,
`shell.env.keep`, `web_fetch.allow_private`) is one line a person can judge without
knowing the key: "the shell runs without asking", not "permissions.allow: [shell]".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hookgate.config.agentfile import AgentConfig

#: `tool` or `tool(argument pattern)`, as permission rules are written.
_RULE = re.compile(r"^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
#: Argument patterns that match every call.
_EVERYTHING = ("", "*", "**")


def widened_reach(config: AgentConfig) -> Iterator[str]:
    """One line per setting of `config` that lets the model do more without asking."""
    if config.yolo:
        yield "yolo: true — tool calls run without asking you"
    for rule in config.permissions.allow:
        yield _allow_rule(rule)
    for directory in config.workspace_dirs:
        yield f"the model may write anywhere under {directory} (workspace.dirs)"
    for name in config.shell.keep_env:
        yield f"${name} reaches the shell (shell.env.keep)"
    if config.web.allow_private:
        yield ("web_fetch may reach private addresses: this machine, your network, a cloud's "
               "metadata service (web_fetch.allow_private)")  # fmt: skip


def _allow_rule(rule: str) -> str:
    match = _RULE.match(rule)
    if match is None:
        return f"allow rule {rule!r}: calls it matches run without asking"
    tool, argument = match.group(1), (match.group(2) or "").strip()
    if argument in _EVERYTHING:
        what = "any command" if tool == "shell" else "any arguments"
        return f"the {tool} tool runs without asking, {what} (allow: {rule})"
    return f"the {tool} tool runs {argument!r} without asking (allow: {rule})"
