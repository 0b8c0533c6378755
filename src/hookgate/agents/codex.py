"""Codex CLI's hooks, answered by hookgate (`hookgate hook codex`).

Codex adopted Claude Code's hook protocol: the same events, input fields and reply
JSON, and Claude's tool names (its `exec_command` is reported as `Bash` with a
`command`), so this is Claude Code's protocol less what Codex refuses from a hook: a
plain `allow` or `ask` (an `ask` is denied, with the reason, as where no one can be
asked), an `updatedInput` without `allow` (so a rewritten call is allowed as Codex
requires), and a replaced result (blocked with the replacement as the reason, which
Codex sends in the output's place).
"""

from __future__ import annotations

import os

from hookgate.agents.claude import EVENTS, ClaudeCode
from hookgate.agents.protocol import HookSettings


class CodexCli(ClaudeCode):
    """Codex CLI's hook protocol (an `AgentProtocol`)."""

    name = "codex"
    title = "Codex"
    project_env = "CODEX_PROJECT_DIR"  # not set by Codex: the event's cwd is the project
    permissions: tuple[str, ...] = ()
    rewrite_decision = "allow"
    replaces_output = False


def settings() -> HookSettings:
    """Where Codex reads hooks (`hooks.json` beside `config.toml`), and the entries
    `hookgate install codex` writes."""
    home = os.environ.get("CODEX_HOME")
    user_file = os.path.join(home, "hooks.json") if home else ".codex/hooks.json"
    return HookSettings(
        agent="codex",
        events=tuple(EVENTS),
        tool_events=("PreToolUse", "PostToolUse"),
        project_file=".codex/hooks.json",
        user_file=user_file,
        timeout=600,
        approve=(
            "Codex runs a hook only once you trust it: review and trust these in Codex "
            "(/hooks); a project's .codex/ is read only in a project Codex trusts."
        ),
    )


PROTOCOL = CodexCli
