"""Claude Code's settings files as hooks: `claude_settings:` in a config file.

`true` reads `~/.claude/settings.json`, `.claude/settings.json` and
`.claude/settings.local.json` (beside the config file) in that order, those that
exist; a list names the files instead. Their `hooks` run as `format: claude` hooks
after the config's own, in file order, an identical one once. What cannot run here
(an event hookgate lacks, a `prompt`, `agent` or `mcp_tool` handler, an `if`
filter) is kept as
a line saying why, for `hooks check`: never dropped silently.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hookgate.hooks.config import HooksConfig, HookSpec, parse_hook
from hookgate.hooks.errors import ConfigError
from hookgate.hooks.events import EventSpec, MatchOn, canonical_event
from hookgate.hooks.files.yamlfile import Where, describe, expect_mapping, read_config, read_file
from hookgate.hooks.formats.claude import claude_event_name

#: The files `claude_settings: true` reads, in merge order; `~` is the user's home.
PROJECT_FILES = (".claude/settings.json", ".claude/settings.local.json")
DEFAULT_FILES = ("~/.claude/settings.json", *PROJECT_FILES)
#: Claude Code events hookgate has no counterpart of, and why.
_MISSING_EVENTS = {
    "PostToolUseFailure": "hookgate runs PostToolUse (postToolCall) for failed calls too",
    "SessionEnd": "hookgate has no session-end hook yet",
    "PermissionRequest": "consent prompts have no hook here; use PreToolUse's 'ask'",
}


@dataclass(frozen=True)
class ClaudeSettings:
    """The hooks the settings files add, in order, and what they hold that cannot run."""

    hooks: Mapping[str, tuple[HookSpec, ...]] = field(default_factory=dict)
    never_fires: tuple[str, ...] = ()
    files: tuple[Path, ...] = ()
    """The settings files named, read or absent (they belong to what must be trusted)."""


def with_claude_settings(
    config: HooksConfig, document: Mapping[Any, Any], where: Where, base_dir: Path
) -> HooksConfig:
    """`config` with the hooks of the settings files `document["claude_settings"]` names."""
    if "claude_settings" not in document:
        return config
    settings = load_claude_settings(
        document["claude_settings"], where.key(document, "claude_settings"), base_dir
    )
    hooks = dict(config.hooks)
    for event, specs in settings.hooks.items():
        hooks[event] = (*hooks.get(event, ()), *specs)
    return HooksConfig(hooks, config.source, settings.never_fires, settings.files)


def settings_files(node: Any, where: Where, base_dir: Path) -> tuple[Path, ...]:
    """The files `claude_settings:` names: the three defaults (whether they exist or not:
    one created later adds hooks, so trust pins its absence too), or its list."""
    if node is False or node is None:
        return ()
    if node is True:
        return tuple(base_dir / Path(name).expanduser() for name in DEFAULT_FILES)
    if not isinstance(node, list) or not all(isinstance(p, str) and p for p in node):
        raise where.error(
            f"expected true, false or a list of settings files, got {describe(node)}",
            hint="claude_settings: true, or claude_settings: [.claude/settings.json]",
        )
    paths = tuple(base_dir / Path(name).expanduser() for name in node)
    for index, path in enumerate(paths):
        if not path.is_file():
            raise where.item(node, index).error(f"{str(path)!r} is not a file")
    return paths


def load_claude_settings(node: Any, where: Where, base_dir: Path) -> ClaudeSettings:
    """Read the settings files `claude_settings:` (at `where`) names into hooks."""
    files = settings_files(node, where, base_dir)
    entries, never = claude_entries(path for path in files if path.is_file())
    hooks: dict[str, list[HookSpec]] = {}
    for item in entries:
        spec = parse_hook(item.entry, item.event, item.where, base_dir=base_dir)
        hooks.setdefault(item.event.name, []).append(spec)
    return ClaudeSettings({e: tuple(s) for e, s in hooks.items()}, tuple(never), files)


@dataclass(frozen=True)
class ClaudeEntry:
    """One Claude handler as the hookgate hook entry that runs it, and where it was."""

    event: EventSpec
    entry: Mapping[str, Any]
    where: Where


def claude_entries(files: Iterable[Path]) -> tuple[list[ClaudeEntry], list[str]]:
    """The hook entries of the settings `files`, merged in order, each identical one once,
    and a line for everything in them that cannot run here."""
    documents = [(path, read_settings(path)) for path in files]
    if any(document.get("disableAllHooks") is True for _, document in documents):
        return [], ["disableAllHooks is set: no Claude hooks run"]
    entries: list[ClaudeEntry] = []
    never: list[str] = []
    seen: set[tuple[str, str]] = set()
    for path, document in documents:
        at = Where(str(path))
        node_hooks = document.get("hooks")
        if node_hooks is None:
            continue
        node_hooks = expect_mapping(node_hooks, at.key(document, "hooks"), "hooks by event")
        for event, groups in node_hooks.items():
            here = at.key(document, "hooks").key(node_hooks, event)
            for item in _event_entries(str(event), groups, here, never):
                key = (item.event.name, json.dumps(item.entry, sort_keys=True))
                if key not in seen:  # identical commands run once, as in Claude Code
                    seen.add(key)
                    entries.append(item)
    return entries, never


def read_settings(path: Path) -> Mapping[Any, Any]:
    """The settings file as a mapping that knows its lines; bad JSON names line and column."""
    where = Where(str(path))
    try:
        text = read_file(path).decode("utf-8")
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise where.error(
            f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:  # the decoder's own limit, about a thousand deep
        raise where.error("nested too deeply to read: not a settings file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise where.error(f"cannot read: {exc}") from exc
    # JSON is YAML: the same values, with their lines; where YAML refuses (a tab in the
    # indentation), the JSON values without lines.
    with contextlib.suppress(ConfigError):
        value = read_config(text, str(path))
    return expect_mapping(value, where, "a settings object")


def _event_entries(event: str, groups: Any, where: Where, never: list[str]) -> list[ClaudeEntry]:
    spec = canonical_event(event)
    if spec is None or claude_event_name(spec) != event:
        reason = _MISSING_EVENTS.get(event, "hookgate has no such event")
        never.append(f"{where.file}: hooks.{event}: {event} never fires here ({reason})")
        return []
    if not isinstance(groups, list):
        raise where.error(f"expected a list of matcher groups, got {describe(groups)}")
    found: list[ClaudeEntry] = []
    for index, group in enumerate(groups):
        at = where.item(groups, index)
        group = expect_mapping(group, at, "a matcher group ({matcher, hooks})")
        matcher = group.get("matcher")
        if matcher not in (None, "", "*") and spec.match_on is MatchOn.NOTHING:
            never.append(f"{at.file}:{at.line}: {at.path}: a matcher on {event} "
                         f"({matcher!r}) is not supported here; the group never fires")  # fmt: skip
            continue
        handlers = group.get("hooks", [])
        if not isinstance(handlers, list):
            raise at.key(group, "hooks").error(
                f"expected a list of hooks, got {describe(handlers)}"
            )
        for number, handler in enumerate(handlers):
            place = at.key(group, "hooks").item(handlers, number)
            entry = _entry(handler, matcher, place, never)
            if entry is not None:
                found.append(ClaudeEntry(spec, entry, place))
    return found


def _entry(handler: Any, matcher: Any, where: Where, never: list[str]) -> dict[str, Any] | None:
    """The hookgate hook entry of one Claude handler, or None (with a line in `never`)."""
    handler = expect_mapping(handler, where, "a hook handler ({type, command})")
    kind = handler.get("type", "command")
    if kind not in ("command", "http") or "if" in handler:
        why = f"type {kind!r} is not supported here" if "if" not in handler else (
            f"the 'if' filter {handler['if']!r} is not supported here")  # fmt: skip
        never.append(f"{where.file}:{where.line}: {where.path}: {why}; this hook never fires")
        return None
    entry: dict[str, Any] = {"format": "claude"}
    for key in ("command", "args", "timeout"):
        if key in handler:
            entry[key] = handler[key]
    if kind == "http":
        entry["http"] = _http_target(handler)
    if matcher not in (None, "", "*"):
        entry["matcher"] = matcher
    return entry


def _http_target(handler: Mapping[str, Any]) -> dict[str, Any]:
    """A Claude `http` handler as hookgate's `http:` target; `allowedEnvVars` is the allowlist.

    The values are checked where every `http:` target is: a bad URL or a header naming a
    variable the allowlist lacks is a config error, never a hook that silently sends less.
    """
    target: dict[str, Any] = {"url": handler.get("url")}
    if "headers" in handler:
        target["headers"] = handler["headers"]
    if "allowedEnvVars" in handler:
        target["env_allowlist"] = handler["allowedEnvVars"]
    return target
