"""`hookgate install AGENT`: the agent's own hook settings, merged so that every event
hookgate answers runs `hookgate hook AGENT`.

The settings file keeps every other key and every other hook as it was; hookgate's
entries are found by their command (`… hook AGENT …`), replaced in place of old ones,
or removed with `--uninstall`. Writing what is already there writes nothing. On a
terminal the diff is shown and confirmed first. An agent's own trust gate is never
bypassed: the closing lines say what the user must approve there.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hookgate.agents.protocol import HookSettings
from hookgate.hooks import ConfigError
from hookgate.hooks.records import NamedTuple


class Change(NamedTuple):
    path: Path
    before: str
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def plan_install(
    settings: HookSettings, path: Path, command: str, *, uninstall: bool = False
) -> Change:
    """The settings file at `path` before and after hookgate's entries are set (or
    removed); raises `ConfigError` for a file that is not a JSON object."""
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    document = _document(path, before)
    original = json.loads(json.dumps(document))
    hooks = document.get("hooks")
    if hooks is None:
        hooks = document["hooks"] = {}
    if not isinstance(hooks, dict):
        raise ConfigError(f"{path}: 'hooks' is not an object", hint="fix or remove that key")
    for event in settings.events:
        entries = [_without_ours(entry, settings.agent) for entry in hooks.get(event, [])]
        kept = [entry for entry in entries if entry is not None]
        if not uninstall:
            kept.append(_entry(settings, event, command))
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    if not hooks:
        document.pop("hooks")
    if document == original:  # already so: not even a space changes
        return Change(path, before, before)
    return Change(path, before, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def hook_command(
    agent: str, agent_file: Path | None, hookgate: str, *, resident: bool = False
) -> str:
    """The command the agent runs: `hookgate hook AGENT [--agent FILE]`, or with
    `resident` `PYTHON -S .../hookgate/agents/relay.py AGENT [--agent FILE]`."""
    words = [sys.executable, "-S", _relay_path(), agent] if resident else [hookgate, "hook", agent]
    if agent_file is not None:
        words += ["--agent", str(agent_file.resolve())]
    return shlex.join(words)


def _relay_path() -> str:
    from hookgate.agents import relay

    return os.path.abspath(relay.__file__)


def hookgate_program() -> str:
    """`hookgate` where PATH finds this very program, else its absolute path (a
    project's `.venv/bin` is not on the agent's PATH)."""
    import shutil

    started = Path(sys.argv[0]).resolve()
    found = shutil.which("hookgate")
    if found is not None and Path(found).resolve() == started:
        return "hookgate"
    return str(started)


def apply_change(change: Change, *, confirm: bool) -> bool:
    """Write `change` (after showing its diff and asking, when `confirm`); False: not written."""
    if not change.changed:
        return False
    if confirm:
        sys.stderr.writelines(_diff(change))
        sys.stderr.write(f"Write {change.path}? [y/N] ")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            return False
    change.path.parent.mkdir(parents=True, exist_ok=True)
    temporary = change.path.with_name(change.path.name + ".hookgate-tmp")
    temporary.write_text(change.after, encoding="utf-8")
    if change.path.exists():
        os.chmod(temporary, change.path.stat().st_mode & 0o7777)
    os.replace(temporary, change.path)
    return True


def _document(path: Path, text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}",
            hint="fix the file; hookgate changes nothing in a file it cannot read",
        ) from exc
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: expected a JSON object, got {type(document).__name__}")
    return document


def _entry(settings: HookSettings, event: str, command: str) -> dict[str, Any]:
    matcher = {"matcher": "*"} if event in settings.tool_events else {}
    name = {"name": settings.hook_name} if settings.hook_name else {}
    hook = {**name, "type": "command", "command": command, "timeout": settings.timeout}
    return {**matcher, "hooks": [hook]}


def _without_ours(entry: Any, agent: str) -> Any:
    """`entry` without hookgate's hooks; None where nothing else was in it."""
    if not isinstance(entry, dict) or not isinstance(entry.get("hooks"), list):
        return entry
    kept = [hook for hook in entry["hooks"] if not _is_ours(hook, agent)]
    if len(kept) == len(entry["hooks"]):
        return entry
    return {**entry, "hooks": kept} if kept else None


def _is_ours(hook: Any, agent: str) -> bool:
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        words = shlex.split(hook["command"])
    except ValueError:
        return False
    relay = any(
        word.endswith(os.path.join("hookgate", "agents", "relay.py"))
        and words[i + 1 : i + 2] == [agent]
        for i, word in enumerate(words)
    )
    hook = len(words) >= 3 and Path(words[0]).name == "hookgate" and words[1:3] == ["hook", agent]
    return relay or hook


def _diff(change: Change) -> Sequence[str]:
    import difflib  # only where a diff is shown

    return list(difflib.unified_diff(
        change.before.splitlines(keepends=True), change.after.splitlines(keepends=True),
        fromfile=f"{change.path} (now)", tofile=f"{change.path} (after)",
    ))  # fmt: skip
