"""What `hookgate hooks check` and every session's start say about permission rules.

A rule whose tool matches no tool the agent offers never applies (`Shell(sudo *)`,
`bash(sudo *)` for `shell`): a warning with a did-you-mean, which `--strict` fails on.
An asked agent or team member whose own rules are looser than its caller's gets a
note: it runs under the caller's deny rules as well as its own (docs/teams.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from hookgate.config.agentfile import TEAM_TOOL_NAMES, AgentConfig, AgentRef, load_agent_file
from hookgate.config.ruletext import Rule
from hookgate.errors import HookgateError
from hookgate.hooks.files.yamlfile import did_you_mean, load_yaml
from hookgate.hooks.formats.claude_tools import CLAUDE_TOOL_NAMES
from hookgate.tools import BUILTIN_TOOL_NAMES

#: Other agents' names for hookgate's tools, lowercased: `Bash` and `bash` mean `shell`.
_OTHER_NAMES = {claude.lower(): ours for ours, claude in CLAUDE_TOOL_NAMES.items()}


def offered_tools(config: AgentConfig) -> tuple[str, ...]:
    """The built-in and hand-off tools the agent of `config` offers (MCP tools aside)."""
    tools = list(config.tools)
    if config.agents:
        tools.append("ask_agent")
    if config.team is not None:
        tools.extend(TEAM_TOOL_NAMES)
    return tuple(tools)


def rule_warnings(config: AgentConfig) -> list[str]:
    """A warning for each permission rule whose tool matches nothing the agent offers."""
    offered = offered_tools(config)
    # A deny rule binds the agents this one asks too, and they may offer other tools.
    passed_on = (*BUILTIN_TOOL_NAMES, "ask_agent", *TEAM_TOOL_NAMES)
    asks = bool(config.agents) or config.team is not None
    warnings = []
    for kind in ("allow", "deny", "ask"):
        rules = getattr(config.permissions, kind)
        for index, text in enumerate(rules):
            rule = Rule.parse(text)
            if rule is None or _applies(rule, offered):
                continue
            if kind == "deny" and asks and _applies(rule, passed_on):
                continue
            hint = _hint(rule.tool, offered)
            warnings.append(
                f"permissions.{kind}[{index}] {text!r}: tool {rule.tool!r} matches no tool this "
                f"agent offers ({', '.join(offered)}); the rule never applies{hint}"
            )
    return warnings


def looser_agents(config: AgentConfig) -> list[str]:
    """A note for each asked agent or team member looser than `config`'s agent."""
    notes = []
    for kind, ref in _called(config):
        try:
            called = load_agent_file(ref.file, import_hooks=False)
        except HookgateError:
            continue  # its own check says what is wrong with it
        looser = []
        if called.yolo and not config.yolo:
            looser.append("it runs with yolo: true")
        missing = [rule for rule in config.permissions.deny if rule not in called.permissions.deny]
        if missing:
            looser.append(f"its deny rules lack {', '.join(map(repr, missing))}")
        if looser:
            notes.append(
                f"{kind} {ref.name!r} ({ref.file}) is looser than this agent: "
                f"{'; '.join(looser)}. It runs under this agent's deny rules as well as its own"
            )
    return notes


def file_findings(path: Path) -> tuple[list[str], list[str]]:
    """`hooks check`'s warnings and notes about the rules of the agent file at `path`;
    none for a file of hooks alone."""
    try:
        document = load_yaml(path)
        if not isinstance(document, Mapping) or "model" not in document:
            return [], []
        config = load_agent_file(path, import_hooks=False)
    except HookgateError:
        return [], []  # the hooks' own check reports it
    return rule_warnings(config), looser_agents(config)


def _applies(rule: Rule, offered: tuple[str, ...]) -> bool:
    # An MCP tool's name is known only once its server runs, and an editor may add
    # servers of its own (ACP): such a rule cannot be judged from the file.
    return rule.tool.startswith("mcp__") or any(rule.names(tool) for tool in offered)


def _hint(tool: str, offered: tuple[str, ...]) -> str:
    meant = _OTHER_NAMES.get(tool.lower())
    if meant is not None and meant in offered:
        return f"; did you mean {meant!r}?"
    if tool in BUILTIN_TOOL_NAMES:
        return f"; list {tool!r} under tools: to offer it"
    close = did_you_mean(tool, offered)
    return f"; {close}" if close else ""


def _called(config: AgentConfig) -> Iterator[tuple[str, AgentRef]]:
    for ref in config.agents.values():
        yield "asked agent", ref
    for ref in config.team.members.values() if config.team is not None else ():
        yield "team member", ref
