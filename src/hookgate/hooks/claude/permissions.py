"""Claude Code's permission rules as hookgate's: the `permissions` of the settings files
`claude_settings:` names (`allow`, `deny`, `ask`, `additionalDirectories`).

Each Claude rule becomes rules of the agent file's grammar, tool by tool as
docs/claude-code.md maps them: `Bash(curl:*)` is `shell(curl)` and `shell(curl *)`,
`Read(./secrets/**)` is `read_file(secrets/**)`, `Edit` is `edit_file` and `write_file`,
`WebFetch(domain:x)` is `web_fetch(domain:x)`. A rule that cannot be mapped is a config
error naming it and its place: a deny rule is never dropped.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookgate.hooks.files.yamlfile import Where, describe, expect_mapping

#: The permission lists a settings file may hold, each the agent file's list of that name.
RULE_LISTS = ("allow", "deny", "ask")
_RULE = re.compile(r"(?P<tool>[A-Za-z0-9_*-]+)(?:\((?P<spec>.*)\))?", re.DOTALL)
_MAPPED = "Bash, Read, Edit, Write, Glob, Grep, WebFetch, WebSearch, Agent (Task), mcp__…"


class UnmappableRule(ValueError):
    """A Claude rule hookgate has no rule for; its text says why."""


@dataclass(frozen=True)
class ClaudePermissions:
    """The settings files' rules in hookgate's grammar, in file order, and their folders."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    directories: tuple[Path, ...] = ()
    """`additionalDirectories`, resolved: the file tools reach them without asking."""


def claude_permissions(
    documents: Iterable[tuple[Path, Mapping[Any, Any]]], base_dir: Path, home: Path
) -> ClaudePermissions:
    """The `permissions` of each settings document, mapped; relative paths from `base_dir`
    (the project), `~` from `home`. Raises `ConfigError` at a rule that cannot be mapped."""
    lists: dict[str, list[str]] = {name: [] for name in RULE_LISTS}
    directories: list[Path] = []
    for path, document in documents:
        if "permissions" not in document:
            continue
        at = Where(str(path)).key(document, "permissions")
        node = expect_mapping(document["permissions"], at, "Claude Code permissions")
        for name in RULE_LISTS:
            for text, where in _strings(node, at, name):
                try:
                    lists[name].extend(map_claude_rule(text, home))
                except UnmappableRule as exc:
                    raise where.error(
                        f"Claude Code's {name} rule {text!r} cannot be mapped: {exc}",
                        hint=f"rules map {_MAPPED}; rewrite or remove it: it is never "
                        "dropped in silence",
                    ) from None
        for text, where in _strings(node, at, "additionalDirectories"):
            folder = (base_dir / Path(text).expanduser()).resolve()
            if not folder.is_dir():
                raise where.error(f"{text!r} is not a directory ({folder})",
                                  hint="relative to the project folder unless absolute")  # fmt: skip
            directories.append(folder)
    allow, deny, ask = (tuple(dict.fromkeys(lists[name])) for name in RULE_LISTS)
    return ClaudePermissions(allow, deny, ask, tuple(dict.fromkeys(directories)))


def _strings(node: Mapping[Any, Any], at: Where, key: str) -> list[tuple[str, Where]]:
    """`node[key]`, a list of strings, each with its place."""
    value = node.get(key, [])
    here = at.key(node, key)
    if not isinstance(value, list):
        raise here.error(f"expected a list of strings, got {describe(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise here.item(value, index).error(f"expected a rule string, got {describe(item)}")
    return [(item, here.item(value, index)) for index, item in enumerate(value)]


def map_claude_rule(text: str, home: Path) -> tuple[str, ...]:
    """hookgate's rules for the Claude rule `text`; raises `UnmappableRule`."""
    match = _RULE.fullmatch(text.strip())
    if match is None:
        raise UnmappableRule("not a rule of the form Tool or Tool(specifier)")
    tool, spec = match["tool"], match["spec"]
    if spec is not None and not spec.strip():
        raise UnmappableRule("an empty specifier")
    if tool.startswith("mcp__"):
        if spec is not None:
            raise UnmappableRule("an MCP rule names a server or a tool, with no specifier")
        return (tool if "__" in tool.removeprefix("mcp__") else f"{tool}__*",)
    mapper = _MAPPERS.get(tool)
    if mapper is None:
        raise UnmappableRule(f"hookgate has no counterpart of Claude Code's tool {tool!r}")
    return mapper(spec, home)


def _bash(spec: str | None, home: Path) -> tuple[str, ...]:
    """`Bash(cmd:*)` is `cmd` alone or followed by arguments; elsewhere `*` is any text."""
    if spec is None or spec.strip() == "*":
        return ("shell",)
    if spec.endswith(":*"):
        prefix = _escape(spec.removesuffix(":*").rstrip(), "*?[")
        return (f"shell({prefix})", f"shell({prefix} *)")
    return (f"shell({_escape(spec, '?[')})",)


def _path_rule(tools: tuple[str, ...], bare: tuple[str, ...]) -> Callable[..., tuple[str, ...]]:
    """Rules on the file tools `tools` for a gitignore-style path; `bare` for no path."""

    def mapped(spec: str | None, home: Path) -> tuple[str, ...]:
        if spec is None:
            return bare
        pattern = _path_pattern(spec.strip(), home)
        return tuple(f"{tool}({pattern})" for tool in tools)

    return mapped


def _path_pattern(spec: str, home: Path) -> str:
    """Claude's path forms: `//abs`, `~/home`, `/project-root`, `rel` or `./rel`; a
    folder (`dir/`) stands for everything in it."""
    if spec.startswith("//"):
        pattern = "/" + spec.lstrip("/")
    elif spec == "~" or spec.startswith("~/"):
        pattern = glob.escape(str(home)) + spec[1:]
    else:
        pattern = spec.lstrip("/").removeprefix("./") or "."
    return pattern + "**" if pattern.endswith("/") else pattern


def _web_fetch(spec: str | None, home: Path) -> tuple[str, ...]:
    if spec is None:
        return ("web_fetch",)
    if not spec.startswith("domain:") or not spec.removeprefix("domain:").strip():
        raise UnmappableRule("a WebFetch rule names a host as domain:HOST")
    return (f"web_fetch(domain:{spec.removeprefix('domain:').strip().lower()})",)


def _agent(spec: str | None, home: Path) -> tuple[str, ...]:
    return ("ask_agent",) if spec is None else (f"ask_agent({_escape(spec.strip(), '*?[')})",)


def _bare(tool: str) -> Callable[..., tuple[str, ...]]:
    def mapped(spec: str | None, home: Path) -> tuple[str, ...]:
        if spec is not None:
            raise UnmappableRule(f"hookgate's {tool} rules take no specifier")
        return (tool,)

    return mapped


def _escape(text: str, characters: str) -> str:
    """`text` with each of `characters` made literal for a glob (`[*]`)."""
    return "".join(f"[{char}]" if char in characters else char for char in text)


_MAPPERS: Mapping[str, Callable[[str | None, Path], tuple[str, ...]]] = {
    "Bash": _bash,
    # Claude's Read rules cover Grep and Glob; theirs here judge the search pattern, so
    # a Read rule with a path guards read_file alone (docs/claude-code.md says so).
    "Read": _path_rule(("read_file",), ("read_file", "grep", "list_files")),
    "Edit": _path_rule(("edit_file", "write_file"), ("edit_file", "write_file")),
    "Write": _path_rule(("write_file",), ("write_file",)),
    "Glob": _bare("list_files"),
    "Grep": _bare("grep"),
    "WebFetch": _web_fetch,
    "WebSearch": _bare("web_search"),
    "Agent": _agent,
    "Task": _agent,
}


def load_claude_permissions(node: Any, where: Where, base_dir: Path) -> ClaudePermissions:
    """The permissions of the settings files `claude_settings:` (`node`, at `where`) names."""
    from hookgate.hooks.claude.settings import read_settings, settings_files

    files = settings_files(node, where, base_dir)
    documents = [(path, read_settings(path)) for path in files if path.is_file()]
    return claude_permissions(documents, base_dir, Path.home())
