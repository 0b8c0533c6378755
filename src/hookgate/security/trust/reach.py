"""What an agent file lets the model do beyond asking, in plain words, for the summary.

Each setting that widens the model's reach (an allow rule, `yolo`, `workspace.dirs`,
`shell.env.keep`, `web_fetch.allow_private`, a sandbox looser than the default) is one
line a person can judge without knowing the key: "the shell runs without asking", not
"permissions.allow: [shell]".
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
    yield from _sandbox(config)


def _sandbox(config: AgentConfig) -> Iterator[str]:
    """What `sandbox:` lets the model's commands do past the default sandbox."""
    from hookgate.tools.sandbox.boundaries import RUN_OUTSIDE, RUNS_OUTSIDE
    from hookgate.tools.sandbox.settings import default_hidden

    sandbox = config.sandbox
    if not sandbox.on:
        yield ("the model's commands run unconfined: they may write anywhere you can, reach "
               "the network and your other programs (sandbox.mode: off)")  # fmt: skip
        return
    if sandbox.network:
        yield "the model's commands reach the network, any address (sandbox.network: true)"
    for directory in sandbox.writable:
        if directory.name in RUN_OUTSIDE:
            yield (f"the model's commands may write {directory}, which {RUNS_OUTSIDE} "
                   "(sandbox.writable)")  # fmt: skip
        else:
            yield f"the model's commands may write anywhere under {directory} (sandbox.writable)"
    shown = [str(path) for path in default_hidden() if path not in sandbox.hidden_paths()]
    if shown:
        yield (f"the model's commands and file tools may read {', '.join(shown)}, hidden by "
               "default: your credentials (sandbox.hidden)")  # fmt: skip


def _allow_rule(rule: str) -> str:
    match = _RULE.match(rule)
    if match is None:
        return f"allow rule {rule!r}: calls it matches run without asking"
    tool, argument = match.group(1), (match.group(2) or "").strip()
    if argument in _EVERYTHING:
        what = "any command" if tool == "shell" else "any arguments"
        return f"the {tool} tool runs without asking, {what} (allow: {rule})"
    return f"the {tool} tool runs {argument!r} without asking (allow: {rule})"
