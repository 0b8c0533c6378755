"""The trust closure of an agent file: its own bytes and every file it makes hookgate
run or read as configuration, found without running or importing any of them.

Whatever each hook and MCP server runs (`hookgate.hooks.runs.whatruns`: scripts, a
`shell:` program, files `env:` names, a `python:` hook's package, a checker's
script), the Claude Code settings files `claude_settings:` names (and their hooks'),
and asked agents' and team members' files with their own closures. Relative paths
start at the agent file's directory (a hook's or server's `cwd` when it sets one),
where the runner starts them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hookgate.config.agentfile import AgentConfig, load_agent_file
from hookgate.hooks import ConfigError, HookSpec
from hookgate.hooks.files.yamlfile import read_text
from hookgate.hooks.runs.whatruns import what_hook_runs, what_server_runs

AGENT_FILE = "agent file"
ASKED_AGENT_FILE = "asked agent's file"
TEAM_MEMBER_FILE = "team member's file"


@dataclass(frozen=True)
class Closure:
    """Every agent file reached (the root first) and each file's role, by path."""

    agents: tuple[AgentConfig, ...]
    files: dict[Path, str]

    @property
    def root(self) -> AgentConfig:
        return self.agents[0]


def closure_of(agent_file: Path) -> Closure:
    """Read `agent_file` and the files it names, importing nothing; raises `ConfigError`."""
    agents: list[AgentConfig] = []
    files: dict[Path, str] = {}
    pending = [(agent_file.resolve(), AGENT_FILE)]
    while pending:
        path, kind = pending.pop(0)
        if path in files:
            continue  # an agent asked twice, or a cycle
        files[path] = kind
        if kind != AGENT_FILE:
            try:
                config = load_agent_file(path, import_hooks=False)
            except ConfigError:
                continue  # trusted as it is (or as absent); its hand-offs fail with the reason
        else:  # read by the name it was given: a refusal names the file the user named
            config = load_agent_file(path, text=read_text(agent_file), import_hooks=False)
        agents.append(config)
        for file, role in _files_of(config).items():
            files.setdefault(file, role)
        pending.extend((ref.file, ASKED_AGENT_FILE) for ref in config.agents.values())
        if config.team is not None:
            pending.extend((ref.file, TEAM_MEMBER_FILE) for ref in config.team.members.values())
    return Closure(tuple(agents), files)


def _files_of(config: AgentConfig) -> dict[Path, str]:
    """The files one agent file names, its asked agents' files aside: what each hook and
    MCP server runs (`whatruns`), and the Claude Code settings files."""
    files: dict[Path, str] = {}
    for hook in config.hooks:
        for path in what_hook_runs(hook, config.base_dir).files:
            files.setdefault(path, _role(hook, folder=path.is_dir()))
    for server in config.mcp_servers.values():
        from hookgate.mcp.config import StdioServer  # a file with MCP servers alone

        if isinstance(server, StdioServer):
            runs = what_server_runs(
                [server.command, *server.args], server.env, server.cwd or config.base_dir,
                config.base_dir,
            )  # fmt: skip
            for path in runs.files:
                files.setdefault(path, f"MCP server {server.name!r} program")
    files.update(_settings_files(config))
    return files


def _role(hook: HookSpec, *, folder: bool = False) -> str:
    """What a file of `hook`'s is, in the summary; a folder's listing is pinned too."""
    if hook.python is not None:
        return "python hook module"
    if hook.model is not None:
        return "checker script"
    return f"{hook.event.name} hook {'folder' if folder else 'script'}"


def _settings_files(config: AgentConfig) -> dict[Path, str]:
    """The Claude Code settings files `claude_settings:` names, absent ones too: a
    `.claude/settings.local.json` a repository adds later brings hooks of its own."""
    return {path.resolve(): "Claude Code settings" for path in config.hooks.settings_files}
