"""The agent file (`hookgate.yaml`): model, system prompt, tools, permissions, hooks.

Loaded once, strictly, into a frozen `AgentConfig`: an unknown key is an error naming
file, line, key path and value. The `hooks:` mapping is the engine's own config.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from types import MappingProxyType

from hookgate.hooks import HookgateError, HooksConfig
from hookgate.hooks.configfile import hooks_of_document, load_hooks_file
from hookgate.hooks.errors import Collected
from hookgate.hooks.events import EVENT_NAMES
from hookgate.hooks.files.yamlfile import (
    Where,
    check_keys,
    describe,
    expect_mapping,
    load_yaml,
    read_config,
)
from hookgate.hooks.records import NamedTuple
from hookgate.tools import BUILTIN_TOOL_NAMES, DEFAULT_TOOL_NAMES
from hookgate.tools.sandbox.settings import SandboxSettings, parse_sandbox
from hookgate.tools.settings import (
    DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_TOOL_CALLS,
    ShellSettings,
    WebLimits,
    parse_shell,
    parse_web_fetch,
    parse_workspace,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # imported by a file that has MCP servers (`hooks fire` reads the rest)
    from typing import Any

    # An agent file's other agents are read in `agentrefs`, imported by a file that
    # names any (`__getattr__`); their names stay importable here.
    from hookgate.config.agentrefs import DEFAULT_ASK_TIMEOUT as DEFAULT_ASK_TIMEOUT
    from hookgate.config.agentrefs import DEFAULT_MAX_PARALLEL as DEFAULT_MAX_PARALLEL
    from hookgate.config.agentrefs import DEFAULT_MAX_ROUNDS as DEFAULT_MAX_ROUNDS
    from hookgate.config.agentrefs import AgentRef as AgentRef
    from hookgate.config.agentrefs import TeamConfig as TeamConfig
    from hookgate.hooks.claude.permissions import ClaudePermissions
    from hookgate.mcp import McpServerConfig
    from hookgate.telemetry import TelemetrySettings

#: The names of `agentrefs` importable from here.
_AGENT_REFS = (
    "DEFAULT_ASK_TIMEOUT", "DEFAULT_MAX_PARALLEL", "DEFAULT_MAX_ROUNDS", "AgentRef", "TeamConfig"
)  # fmt: skip


def __getattr__(name: str) -> Any:
    # `agentrefs` (and `ruletext`) only where a file has other agents (or rules): a file
    # of hooks and a model, read on every `hooks fire`, needs neither (~2 M instructions).
    if name in _AGENT_REFS:
        from hookgate.config import agentrefs

        return getattr(agentrefs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


DEFAULT_AGENT_FILE = Path("hookgate.yaml")
#: The tools a team's supervisor gets (hookgate.team.tools).
TEAM_TOOL_NAMES = ("create_task", "list_tasks", "wait_for_tasks")
TOP_LEVEL_KEYS = (
    "model", "system", "tools", "permissions", "yolo", "hooks", "claude_settings", "agents",
    "mcp_servers",
    "max_steps", "context_budget", "shell_timeout", "max_ask_depth", "workspace", "shell",
    "max_tool_calls", "max_argument_bytes", "team", "web_fetch", "guardrails", "sandbox",
    "telemetry",
)  # fmt: skip
#: The lists of `permissions:`, in `Permissions`' order.
PERMISSION_LISTS = ("allow", "deny", "ask")
TEAM_KEYS = ("name", "members", "max_parallel", "max_rounds")
#: How many hand-offs deep an agent may run, by default; with 1, asked agents ask no one.
DEFAULT_MAX_ASK_DEPTH = 3
_EXAMPLE_MODEL = "llama3.2, base_url: http://localhost:11434/v1"
_MODEL_HINT = f"model: scripted:replies.yaml (offline), or model: {{name: {_EXAMPLE_MODEL}}}"
DEFAULT_SYSTEM = (
    "You are a careful coding assistant working in the user's project directory. "
    "Use the tools to inspect and change files; keep answers short."
)


class Permissions(NamedTuple):
    """Rules on tool calls, judged on the model's own arguments: deny, then ask (consent
    even where none would be asked, `yolo` included), then allow; else consent if the
    tool wants it."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()


class AgentConfig(NamedTuple):
    path: Path
    model: str | Mapping[str, Any] | None
    """None in a file of hooks alone, run inside another agent (`hookgate hook`)."""
    system: str = DEFAULT_SYSTEM
    tools: tuple[str, ...] = DEFAULT_TOOL_NAMES
    permissions: Permissions = Permissions()
    yolo: bool = False
    hooks: HooksConfig = HooksConfig()
    agents: Mapping[str, AgentRef] = MappingProxyType({})
    team: TeamConfig | None = None
    """The team this agent supervises, if its file declares one."""
    mcp_servers: Mapping[str, McpServerConfig] = MappingProxyType({})
    max_steps: int = 50
    context_budget: int = 200_000
    """Characters of conversation kept before older turns are summarised."""
    shell_timeout: float = 120.0
    max_ask_depth: int = DEFAULT_MAX_ASK_DEPTH
    """Hand-offs deeper than this are refused (an asked agent runs at depth 1)."""
    workspace_dirs: tuple[Path, ...] = ()
    """Resolved directories the file tools reach without consent, besides the project."""
    shell: ShellSettings = ShellSettings()
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    """Tool calls one model reply may make; those past it fail with a message."""
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES
    """Bytes of JSON arguments one tool call may carry."""
    web: WebLimits = WebLimits()
    """What `web_fetch` may reach and read."""
    sandbox: SandboxSettings = SandboxSettings()
    """How the kernel confines the model's commands (`sandbox:`; workspace-write by default)."""
    telemetry: TelemetrySettings | None = None
    """`telemetry:` (OpenTelemetry export); None where the file has no such key."""

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def model_spec(self) -> str | Mapping[str, Any]:
        """`model:`, which a session of hookgate's own needs; raises `ConfigError` without."""
        if self.model is None:
            raise Where(str(self.path)).error("no 'model' key", hint=_MODEL_HINT)
        return self.model


def load_hooks_of(path: Path, import_python: bool) -> HooksConfig:
    """The hooks of `path` for `hookgate hooks`: a file of `hooks:` alone is read as
    such; any other is an agent file, validated whole, with the errors a session gives."""
    document = load_yaml(path)
    hooks_only = isinstance(document, Mapping) and set(document) <= {"hooks", "claude_settings"}
    if document is None or hooks_only:
        return load_hooks_file(path, import_python=import_python)
    return load_agent_file(path, import_hooks=import_python).hooks


def load_agent_file(
    path: Path, *, text: str | None = None, import_hooks: bool = True
) -> AgentConfig:
    """Read and validate the agent file at `path` (or `text`, its contents as read).

    `import_hooks=False` validates without importing `python:` hooks' modules: the
    trust summary reads a file it does not trust yet that way.
    """
    path = path.resolve()
    where = Where(str(path))
    document = load_yaml(path) if text is None else read_config(text, str(path))
    document = expect_mapping(document if document is not None else {}, where, "the agent file")
    found = Collected()
    found.run(partial(_top_level_keys, document, where, path))
    claude = found.run(partial(_claude_permissions, document, where, path.parent))
    sections = _sections(document, where, path)
    fields: dict[str, Any] = {name: found.run(parse) for name, parse in sections.items()}
    model = found.run(partial(_model, document, where)) if "model" in document else None
    permissions = found.run(partial(_permissions, document, where, claude))
    hooks = found.run(partial(_hooks, document, where, path.parent, import_hooks))
    workspace = found.run(partial(parse_workspace, document, where, path.parent)) or ()
    found.raise_any()
    assert permissions is not None  # a check that raised nothing returned its value
    assert hooks is not None
    return AgentConfig(
        path=path, model=model, permissions=permissions, hooks=hooks,
        workspace_dirs=tuple(dict.fromkeys((*workspace, *(claude.directories if claude else ())))),
        **fields,
    )  # fmt: skip


def _sections(
    document: Mapping[Any, Any], where: Where, path: Path
) -> dict[str, Callable[[], Any]]:
    """The parsers of the agent file's independent settings, by `AgentConfig` field."""
    base = path.parent
    return {
        "system": partial(_text, document, where, "system", DEFAULT_SYSTEM),
        "tools": partial(_tools, document, where),
        "yolo": partial(_bool, document, where, "yolo"),
        "agents": partial(_agents, document, where, base),
        "team": partial(_team, document, where, base),
        "mcp_servers": partial(_mcp_servers, document, where, base),
        "max_steps": partial(_positive, document, where, "max_steps", 50),
        "context_budget": partial(_positive, document, where, "context_budget", 200_000),
        "shell_timeout": partial(_seconds, document, where, "shell_timeout", 120),
        "max_ask_depth": partial(
            _positive, document, where, "max_ask_depth", DEFAULT_MAX_ASK_DEPTH
        ),
        "shell": partial(parse_shell, document, where),
        "web": partial(parse_web_fetch, document, where),
        "sandbox": partial(parse_sandbox, document, where, base),
        "max_tool_calls": partial(
            _positive, document, where, "max_tool_calls", DEFAULT_MAX_TOOL_CALLS
        ),
        "max_argument_bytes": partial(
            _positive, document, where, "max_argument_bytes", DEFAULT_MAX_ARGUMENT_BYTES
        ),
        "telemetry": partial(_telemetry, document, where),
    }


def _top_level_keys(document: Mapping[Any, Any], where: Where, path: Path) -> None:
    """Refuse unknown top-level keys, with the one-line fix for the common misplacements:
    a hook event at the top level, Claude Code's settings file given as the agent file."""
    if path.parent.name == ".claude" and path.suffix == ".json":
        raise where.error(
            "this is Claude Code's settings file, not an agent file",
            hint="put 'claude_settings: true' in your hookgate.yaml to read its hooks and "
            "permissions, or run 'hookgate hooks import-claude' to print them as a hooks: block",
        )
    found = Collected()
    for key in document:
        if isinstance(key, str) and key in EVENT_NAMES:
            found.errors.append(where.key(document, key).error(
                f"unknown key {key!r}: {key!r} is a hook event, at the top level of the agent file",
                hint=f"put it under hooks: (hooks: {{{key}: [{{command: ...}}]}})",
            ))  # fmt: skip
    reported = [key for key in document if isinstance(key, str) and key in EVENT_NAMES]
    found.run(partial(check_keys, document, where, (*TOP_LEVEL_KEYS, *reported)))
    found.raise_any()


def _telemetry(document: Mapping[Any, Any], where: Where) -> TelemetrySettings | None:
    if "telemetry" not in document:
        return None
    from hookgate.telemetry import parse_telemetry  # a file that asks for it only

    return parse_telemetry(document["telemetry"], where.key(document, "telemetry"))


def _hooks(
    document: Mapping[Any, Any], where: Where, base_dir: Path, import_hooks: bool
) -> HooksConfig:
    hooks = hooks_of_document(document, where, base_dir, import_python=import_hooks)
    if "guardrails" not in document:  # the model hooks' modules: only a file that has them
        return hooks
    from hookgate.hooks.guardrails import with_guardrails

    return with_guardrails(hooks, document, where, base_dir)


def _mcp_servers(
    document: Mapping[Any, Any], where: Where, base_dir: Path
) -> Mapping[str, McpServerConfig]:
    if document.get("mcp_servers") is None:
        return {}
    from hookgate.mcp import parse_mcp_servers

    return parse_mcp_servers(document["mcp_servers"], where.key(document, "mcp_servers"), base_dir)


def _model(document: Mapping[Any, Any], where: Where) -> str | Mapping[str, Any]:
    value = document["model"]
    at = where.key(document, "model")
    if isinstance(value, str) and value.strip():
        return value
    if not isinstance(value, Mapping):
        raise at.error(
            f"expected a model name, 'scripted:PATH' or a mapping, got {describe(value)}"
        )
    # Checked here, not when the model is built: a mistake must stop hookgate with its
    # line before a session file exists or a hook runs (and `hookgate acp` at start).
    from hookgate.models import MODEL_KEYS, model_setting_problem  # a mapping needs them

    check_keys(value, at, MODEL_KEYS)
    if "name" not in value:
        raise at.error(
            "the model mapping needs a 'name'", hint=f"model: {{name: {_EXAMPLE_MODEL}}}"
        )
    for key, item in value.items():
        if (problem := model_setting_problem(key, item)) is not None:
            raise at.key(value, key).error(problem.message, hint=problem.hint)
    return dict(value)


def _text(document: Mapping[Any, Any], where: Where, key: str, default: str) -> str:
    value = document.get(key, default)
    if not isinstance(value, str):
        raise where.key(document, key).error(f"expected a string, got {describe(value)}")
    return value


def _bool(document: Mapping[Any, Any], where: Where, key: str) -> bool:
    value = document.get(key, False)
    if not isinstance(value, bool):
        raise where.key(document, key).error(f"expected true or false, got {describe(value)}")
    return value


def _positive(document: Mapping[Any, Any], where: Where, key: str, default: int) -> int:
    value = document.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise where.key(document, key).error(
            f"expected a positive whole number, got {describe(value)}"
        )
    return value


def _seconds(document: Mapping[Any, Any], where: Where, key: str, default: int) -> float:
    value = _positive(document, where, key, default)
    try:
        return float(value)
    except OverflowError:  # a whole number past what a float holds
        raise where.key(document, key).error(
            f"{value} seconds is more than can be waited"
        ) from None


def _string_list(document: Mapping[Any, Any], where: Where, key: str) -> tuple[str, ...]:
    value = document.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise where.key(document, key).error(f"expected a list of strings, got {describe(value)}")
    return tuple(value)


def _tools(document: Mapping[Any, Any], where: Where) -> tuple[str, ...]:
    if "tools" not in document:
        return DEFAULT_TOOL_NAMES
    names = _string_list(document, where, "tools")
    for index, name in enumerate(names):
        if name not in BUILTIN_TOOL_NAMES:
            raise (
                where.key(document, "tools")
                .item(document["tools"], index)
                .error(
                    f"unknown tool {name!r}",
                    hint="built-in tools: " + ", ".join(BUILTIN_TOOL_NAMES),
                )
            )
    return names


def _permissions(
    document: Mapping[Any, Any], where: Where, claude: ClaudePermissions | None
) -> Permissions:
    """`permissions:` (`allow`, `deny`, `ask`), then the Claude settings files' rules."""
    own = Permissions()
    if "permissions" in document:
        at = where.key(document, "permissions")
        node = expect_mapping(document["permissions"], at, "permission rules")
        check_keys(node, at, PERMISSION_LISTS)
        own = Permissions(*(_rule_list(node, at, name) for name in PERMISSION_LISTS))
    if claude is None:
        return own
    return Permissions(*(
        tuple(dict.fromkeys((*getattr(own, name), *getattr(claude, name))))
        for name in PERMISSION_LISTS
    ))  # fmt: skip


def _rule_list(node: Mapping[Any, Any], at: Where, key: str) -> tuple[str, ...]:
    """The rules under `key`: a rule that does not parse would never apply, in silence."""
    from hookgate.config.ruletext import RULE_SHAPE, rule_problem

    rules = _string_list(node, at, key)
    for index, rule in enumerate(rules):
        problem = rule_problem(rule)
        if problem is not None:
            raise (
                at.key(node, key)
                .item(node[key], index)
                .error(
                    f"{rule!r} is not a permission rule: {problem}", hint=f"a rule is {RULE_SHAPE}"
                )
            )
    return rules


def _claude_permissions(
    document: Mapping[Any, Any], where: Where, base_dir: Path
) -> ClaudePermissions | None:
    """The `permissions` of the Claude Code settings files `claude_settings:` names."""
    if "claude_settings" not in document:
        return None
    from hookgate.hooks.claude.permissions import load_claude_permissions  # a file that uses it

    at = where.key(document, "claude_settings")
    return load_claude_permissions(document["claude_settings"], at, base_dir)


def _agents(document: Mapping[Any, Any], where: Where, base_dir: Path) -> dict[str, AgentRef]:
    if document.get("agents") is None:
        return {}
    from hookgate.config.agentrefs import parse_agents

    return parse_agents(document, where, base_dir)


def _team(document: Mapping[Any, Any], where: Where, base_dir: Path) -> TeamConfig | None:
    if document.get("team") is None:
        return None
    from hookgate.config.agentrefs import (
        AGENT_NAME,
        DEFAULT_MAX_PARALLEL,
        DEFAULT_MAX_ROUNDS,
        TeamConfig,
        parse_agent_refs,
    )

    at = where.key(document, "team")
    node = expect_mapping(document["team"], at, "a team (name, members, max_parallel, max_rounds)")
    check_keys(node, at, TEAM_KEYS)
    name = node.get("name")
    if not isinstance(name, str) or not re.match(AGENT_NAME, name):
        raise (at.key(node, "name") if "name" in node else at).error(
            f"expected a team name, got {describe(name)}",
            hint="e.g. name: release (letters, digits, '-', '_' and '.')",
        )
    if not node.get("members"):
        raise (at.key(node, "members") if "members" in node else at).error(
            "a team needs members", hint="members: {reviewer: {file: ../reviewer/hookgate.yaml}}"
        )
    return TeamConfig(
        name=name,
        members=parse_agent_refs(node["members"], at.key(node, "members"), base_dir),
        max_parallel=_positive(node, at, "max_parallel", DEFAULT_MAX_PARALLEL),
        max_rounds=_positive(node, at, "max_rounds", DEFAULT_MAX_ROUNDS),
    )


def offered_tool_names(path: Path) -> tuple[str, ...] | None:
    """The tools the agent file at `path` offers the model, for `hooks check`'s matcher
    warnings; None where that is not known (not an agent file, or MCP servers)."""
    try:
        document = load_yaml(path)
    except HookgateError:
        return None
    if not isinstance(document, Mapping) or "model" not in document:
        return None
    if document.get("mcp_servers"):
        return None  # their tools are known only once the servers run
    tools = document.get("tools", list(DEFAULT_TOOL_NAMES))
    if not isinstance(tools, list) or not all(isinstance(name, str) for name in tools):
        return None
    if document.get("agents"):
        tools = [*tools, "ask_agent"]
    if document.get("team"):
        tools = [*tools, *TEAM_TOOL_NAMES]
    return tuple(tools)
