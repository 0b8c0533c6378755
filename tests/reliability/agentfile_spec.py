"""An independent reading of the agent file's documented rules, for the fuzz tests.

`render` writes a document as block YAML and records the lines each key and item may
be blamed on; `violations` lists every rule of docs/runtime.md, docs/hooks.md,
docs/handoffs.md and docs/mcp-and-acp.md the document breaks, each with the key path
an error must name. Nothing here imports `hookgate`: the two readings must agree.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Key = Any  # a mapping key (a string, or whatever YAML made of it) or a list index
KeyPath = tuple[Key, ...]

TOP_LEVEL = (
    "model", "system", "tools", "permissions", "yolo", "hooks", "agents", "mcp_servers",
    "max_steps", "context_budget", "shell_timeout", "max_ask_depth",
)  # fmt: skip
BUILTIN_TOOLS = ("shell", "read_file", "write_file", "edit_file", "list_files", "grep")
MODEL_KEYS = ("name", "base_url", "api_key_env", "timeout", "temperature")
HOOK_KEYS = (
    "name", "command", "args", "python", "shell", "matcher", "timeout",
    "onError", "format", "env", "cwd",
)  # fmt: skip
AGENT_KEYS = ("file", "description", "timeout")
STDIO_KEYS = ("command", "args", "env", "cwd", "timeout")
HTTP_KEYS = ("url", "headers", "timeout")
POSITIVE_INTEGERS = ("max_steps", "context_budget", "shell_timeout", "max_ask_depth")


@dataclass(frozen=True)
class Event:
    """A row of the events table of docs/hooks.md, as far as config cares."""

    alias: str | None
    matches: bool
    """Whether a `matcher` has a tool or agent name to test."""
    mecatl: bool


EVENTS = {
    "sessionStart": Event("SessionStart", matches=False, mecatl=True),
    "preGeneration": Event("UserPromptSubmit", matches=False, mecatl=True),
    "preToolCall": Event("PreToolUse", matches=True, mecatl=True),
    "postToolCall": Event("PostToolUse", matches=True, mecatl=True),
    "postGeneration": Event("Stop", matches=False, mecatl=True),
    "preAsk": Event(None, matches=True, mecatl=False),
    "postAsk": Event(None, matches=True, mecatl=False),
    "subagentStart": Event("SubagentStart", matches=True, mecatl=True),
    "subagentStop": Event("SubagentStop", matches=True, mecatl=True),
    "teammateIdle": Event("TeammateIdle", matches=True, mecatl=True),
    "taskCreated": Event("TaskCreated", matches=True, mecatl=True),
    "taskCompleted": Event("TaskCompleted", matches=True, mecatl=True),
}
SPELLINGS = {
    spelling: name
    for name, event in EVENTS.items()
    for spelling in (name, event.alias)
    if spelling is not None
}
#: The Python hooks the generators use, and whether each can be imported.
PYTHON_HOOKS = {"json:loads": True, "json:nope": False, "no_such_module_x:f": False}
#: "10", "2.5", "500ms", "10s", "2m", as docs/hooks.md spells durations.
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}
_AGENT_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_ENV_NAME = re.compile(r"[^=\x00]+")
#: An HTTP header name (RFC 9110 token); a value holds no CR, LF or NUL.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: The longest hook timeout docs/hooks.md allows, in seconds.
MAX_HOOK_TIMEOUT = 3600.0


# --- rendering ------------------------------------------------------------------------------


@dataclass
class Rendered:
    """YAML text, and for each node the 1-based lines an error about it may name."""

    text: str
    lines: dict[KeyPath, set[int]] = field(default_factory=dict)


def render(document: Any) -> Rendered:
    """`document` as YAML: mappings and lists in block style, everything else in flow."""
    out: list[str] = []
    rendered = Rendered("")
    if isinstance(document, dict | list) and document:
        items = document.items() if isinstance(document, dict) else enumerate(document)
        for key, value in items:
            head = f"{_key(key)}:" if isinstance(document, dict) else "-"
            _write(value, (key,), 0, head, out, rendered.lines)
    else:
        out.append(_flow(document))
    rendered.text = "".join(line + "\n" for line in out)
    return rendered


def _write(
    value: Any,
    path: KeyPath,
    indent: int,
    head: str,
    out: list[str],
    lines: dict[KeyPath, set[int]],
) -> None:
    """`head` (`"key":` or `-`), then `value` on the same line or as a block below it.

    The error about a block node may name its key's line or the line its value starts on.
    """
    here = len(out) + 1
    if isinstance(value, dict | list) and value:
        out.append(" " * indent + head)
        lines.setdefault(path, set()).update((here, here + 1))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            inner = f"{_key(key)}:" if isinstance(value, dict) else "-"
            _write(item, (*path, key), indent + 2, inner, out, lines)
        return
    out.append(" " * indent + head + " " + _flow(value))
    for inner in _paths(value, path):
        lines.setdefault(inner, set()).add(here)


def _paths(value: Any, path: KeyPath) -> Iterator[KeyPath]:
    yield path
    if isinstance(value, dict | list):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from _paths(item, (*path, key))


def _key(key: Any) -> str:
    return _flow(key)


def _flow(value: Any) -> str:
    if isinstance(value, str):
        # JSON's escapes are YAML's; DEL is the one printable ASCII character YAML refuses raw.
        return json.dumps(value).replace("\x7f", "\\u007f")
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot render {value!r}")


def plain(value: Any) -> Any:
    """What YAML read back, as plain dicts and lists (to compare with the document)."""
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


# --- the rules ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Violation:
    """A broken rule: where an error must point, and the unknown key it names, if any."""

    path: KeyPath
    unknown_key: Any = None
    is_unknown_key: bool = False

    @property
    def shown(self) -> str:
        """The key path as hookgate's messages spell it: `hooks.preToolCall[0].onError`."""
        text = ""
        for part in self.path:
            if isinstance(part, _Index):
                text += f"[{part}]"
            else:
                name = str(part) if part != "" else "''"
                text += f".{name}" if text else name
        return text


class _Index(int):
    """A list index in a key path (a plain int there is a mapping key YAML read as a number)."""


@dataclass
class Checker:
    """Collects the violations of one document; `base_dir` anchors relative `cwd`s."""

    base_dir: Path
    found: list[Violation] = field(default_factory=list)

    def bad(self, *path: Key) -> None:
        self.found.append(Violation(tuple(path)))

    def keys(self, node: Mapping[Any, Any], path: KeyPath, allowed: tuple[str, ...]) -> None:
        for key in node:
            if not isinstance(key, str) or key not in allowed:
                self.found.append(Violation((*path, key), key, is_unknown_key=True))


def violations(document: Any, base_dir: Path) -> list[Violation]:
    """Every documented rule `document` (the agent file, as YAML read it) breaks."""
    check = Checker(base_dir)
    if document is None:
        document = {}
    if not isinstance(document, Mapping):
        check.bad()
        return check.found
    check.keys(document, (), TOP_LEVEL)
    if "model" in document:  # optional: a file for `hookgate hook` alone has none
        _model(check, document["model"])
    if "system" in document and not isinstance(document["system"], str):
        check.bad("system")
    if "tools" in document:
        _tools(check, document["tools"])
    if "permissions" in document:
        _permissions(check, document["permissions"])
    if "yolo" in document and not isinstance(document["yolo"], bool):
        check.bad("yolo")
    for key in POSITIVE_INTEGERS:
        if key in document and not _whole(document[key]):
            check.bad(key)
    if _whole(document.get("shell_timeout")) and not _fits_float(document["shell_timeout"]):
        check.bad("shell_timeout")  # seconds to wait, so a number a clock can count
    if document.get("hooks") is not None:
        _hooks(check, document["hooks"])
    if document.get("agents") is not None:
        _agents(check, document["agents"])
    if document.get("mcp_servers") is not None:
        _servers(check, document["mcp_servers"])
    return check.found


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fits_float(value: Any) -> bool:
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _text(value: Any) -> bool:
    """A non-empty string a program can be given (no NUL)."""
    return isinstance(value, str) and bool(value.strip()) and "\x00" not in value


def _model(check: Checker, model: Any) -> None:
    if isinstance(model, str):
        if not model.strip():
            check.bad("model")
        return
    if not isinstance(model, Mapping):
        check.bad("model")
        return
    check.keys(model, ("model",), MODEL_KEYS)
    if "name" not in model:
        check.bad("model")
    for key in ("name", "api_key_env", "base_url"):
        if key in model and not (isinstance(model[key], str) and model[key].strip()):
            check.bad("model", key)
    url = model.get("base_url")
    if isinstance(url, str) and not url.strip().startswith(("http://", "https://")):
        check.bad("model", "base_url")
    timeout = model.get("timeout", 1)
    if not (_number(timeout) and _fits_float(timeout) and timeout > 0):
        check.bad("model", "timeout")
    temperature = model.get("temperature")
    if temperature is not None and not (
        _number(temperature) and _fits_float(temperature) and temperature >= 0
    ):
        check.bad("model", "temperature")


def _tools(check: Checker, tools: Any) -> None:
    if not isinstance(tools, list) or not all(isinstance(name, str) for name in tools):
        check.bad("tools")
        return
    for index, name in enumerate(tools):
        if name not in BUILTIN_TOOLS:
            check.bad("tools", _Index(index))


def _permissions(check: Checker, permissions: Any) -> None:
    if not isinstance(permissions, Mapping):
        check.bad("permissions")
        return
    check.keys(permissions, ("permissions",), ("allow", "deny", "ask"))
    for key in ("allow", "deny", "ask"):
        rules = permissions.get(key, [])
        if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
            check.bad("permissions", key)
            continue
        for index, rule in enumerate(rules):
            if not _is_rule(rule):
                check.bad("permissions", key, _Index(index))


def _is_rule(text: str) -> bool:
    """`tool` or `tool(pattern)`: a name without parentheses, then at most one
    parenthesised pattern that runs to the end."""
    text = text.strip()
    if "(" not in text:
        return bool(text) and ")" not in text
    head = text[: text.index("(")]
    return bool(head.strip()) and ")" not in head and text.endswith(")")


def _hooks(check: Checker, hooks: Any) -> None:
    if not isinstance(hooks, Mapping):
        check.bad("hooks")
        return
    seen: set[str] = set()
    for spelling, entries in hooks.items():
        name = SPELLINGS.get(spelling) if isinstance(spelling, str) else None
        if name is None or name in seen:
            check.bad("hooks", spelling)
            continue
        seen.add(name)
        if entries is None:
            continue
        if not isinstance(entries, list):
            check.bad("hooks", spelling)
            continue
        for index, entry in enumerate(entries):
            _hook(check, ("hooks", spelling, _Index(index)), entry, EVENTS[name])


def _hook(check: Checker, path: KeyPath, hook: Any, event: Event) -> None:
    if not isinstance(hook, Mapping):
        check.bad(*path)
        return
    check.keys(hook, path, HOOK_KEYS)
    if sum(key in hook for key in ("command", "args", "python")) != 1:
        check.bad(*path)
    if "command" in hook and not _text(hook["command"]):
        check.bad(*path, "command")
    args = hook.get("args", ["x"])
    if not (isinstance(args, list) and args and all(_program_arg(arg) for arg in args)):
        check.bad(*path, "args")
    python = hook.get("python")
    if "python" in hook and not (isinstance(python, str) and PYTHON_HOOKS.get(python, False)):
        check.bad(*path, "python")
    for key in ("name", "shell"):
        if key in hook and not _program_arg(hook[key]):
            check.bad(*path, key)
    if "timeout" in hook and not 0 < (_seconds(hook["timeout"]) or 0) <= MAX_HOOK_TIMEOUT:
        check.bad(*path, "timeout")
    if hook.get("onError", "warn") not in ("warn", "fail", "ignore"):
        check.bad(*path, "onError")
    form = hook.get("format", "native")
    if form not in ("native", "mecatl") or (form == "mecatl" and not event.mecatl):
        check.bad(*path, "format")
    if "matcher" in hook and not (event.matches and _regex(hook["matcher"])):
        check.bad(*path, "matcher")
    if "env" in hook:
        _hook_env(check, path, hook["env"])
    cwd = hook.get("cwd", ".")
    if not (_program_arg(cwd) and (check.base_dir / cwd).is_dir()):
        check.bad(*path, "cwd")


def _program_arg(value: Any) -> bool:
    """A string a program can receive: NUL is the one character no argv can hold."""
    return isinstance(value, str) and "\x00" not in value


def _seconds(value: Any) -> float | None:
    if _number(value):
        return float(value) if _fits_float(value) else None
    if isinstance(value, str) and (match := _DURATION.fullmatch(value)):
        return float(match.group(1)) * _UNITS[match.group(2)]
    return None


def _regex(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        re.compile(value)
    except (re.error, OverflowError, RecursionError):
        return False
    return True


def _hook_env(check: Checker, path: KeyPath, env: Any) -> None:
    if not isinstance(env, Mapping):
        check.bad(*path, "env")
        return
    for name, value in env.items():
        scalar = _number(value) or isinstance(value, str)
        if not (_env_name(name) and scalar and "\x00" not in str(value)):
            check.bad(*path, "env", name)


def _env_name(name: Any) -> bool:
    return isinstance(name, str) and _ENV_NAME.fullmatch(name) is not None


def _agents(check: Checker, agents: Any) -> None:
    if not isinstance(agents, Mapping):
        check.bad("agents")
        return
    for name, entry in agents.items():
        path = ("agents", name)
        if not (isinstance(name, str) and _AGENT_NAME.fullmatch(name)):
            check.bad(*path)
            continue
        if not isinstance(entry, Mapping):
            check.bad(*path)
            continue
        check.keys(entry, path, AGENT_KEYS)
        if "file" not in entry:
            check.bad(*path)
        elif not _text(entry["file"]):
            check.bad(*path, "file")
        if "description" in entry and not isinstance(entry["description"], str):
            check.bad(*path, "description")
        if "timeout" in entry and not (_seconds(entry["timeout"]) or 0) > 0:
            check.bad(*path, "timeout")


def _servers(check: Checker, servers: Any) -> None:
    if not isinstance(servers, Mapping):
        check.bad("mcp_servers")
        return
    for name, entry in servers.items():
        path = ("mcp_servers", name)
        valid_name = isinstance(name, str) and _SERVER_NAME.fullmatch(name) and "__" not in name
        if not valid_name or not isinstance(entry, Mapping):
            check.bad(*path)
            continue
        if "command" in entry and "url" in entry:
            check.bad(*path)
        elif "url" in entry:
            _http_server(check, path, entry)
        elif "command" in entry:
            _stdio_server(check, path, entry)
        else:
            check.bad(*path)
        if "timeout" in entry and not (
            _number(entry["timeout"]) and _fits_float(entry["timeout"]) and entry["timeout"] > 0
        ):
            check.bad(*path, "timeout")


def _http_server(check: Checker, path: KeyPath, entry: Mapping[Any, Any]) -> None:
    check.keys(entry, path, HTTP_KEYS)
    url = entry["url"]
    if not (_text(url) and url.startswith(("http://", "https://"))):
        check.bad(*path, "url")
    headers = entry.get("headers")
    if headers is None:
        return
    if not isinstance(headers, Mapping):
        check.bad(*path, "headers")
        return
    for name, value in headers.items():
        sendable = isinstance(value, str) and not set(value) & {"\r", "\n", "\x00"}
        if not (isinstance(name, str) and _HEADER_NAME.fullmatch(name) and sendable):
            check.bad(*path, "headers", name)


def _stdio_server(check: Checker, path: KeyPath, entry: Mapping[Any, Any]) -> None:
    check.keys(entry, path, STDIO_KEYS)
    if not _text(entry["command"]):
        check.bad(*path, "command")
    args = entry.get("args", [])
    if not (isinstance(args, list) and all(_program_arg(arg) for arg in args)):
        check.bad(*path, "args")
    env = entry.get("env")
    if isinstance(env, Mapping):
        for name, value in env.items():
            if not (_env_name(name) and _program_arg(value)):
                check.bad(*path, "env", name)
    elif env is not None:
        check.bad(*path, "env")
    if "cwd" in entry and not _text(entry["cwd"]):
        check.bad(*path, "cwd")


def index(position: int) -> Key:
    """A list index for a key path (a bare int is a mapping key)."""
    return _Index(position)
