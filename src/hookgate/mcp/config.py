"""The `mcp_servers:` section of the agent file, validated into frozen dataclasses.

Each entry is a server by name: `command` (with `args`, `env`, `cwd`, and `sandbox:
true` to confine it as the shell is) starts a stdio server, `url` (with `headers`) reaches a streamable HTTP one; `timeout` bounds its
start and each call. A mistake is a `ConfigError` naming file, line and key path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hookgate.hooks.files.yamlfile import Where, check_keys, describe, expect_mapping

#: Seconds a server may take to answer one call, unless its entry says `timeout:`.
DEFAULT_TIMEOUT = 60.0
#: Seconds a server may take to start (connect, handshake, list its tools), unless its
#: entry says `start_timeout:`. Apart from `timeout`: a server that must answer a call
#: within a second may still need longer than that to start (`npx`, `uvx`, a busy machine).
DEFAULT_START_TIMEOUT = 60.0
STDIO_KEYS = ("command", "args", "env", "cwd", "timeout", "start_timeout", "sandbox")
HTTP_KEYS = ("url", "headers", "timeout", "start_timeout")
#: A server name becomes part of tool names (`mcp__<server>__<tool>`): model APIs
#: accept letters, digits, `_` and `-` there, and `__` would blur the separator.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\Z")
_EXAMPLE = "mcp_servers: {docs: {command: uvx, args: [mcp-server-fetch]}}"
#: An HTTP header name (an RFC 9110 token); its value may hold no CR, LF or NUL.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
_UNSENDABLE = re.compile(r"[\r\n\x00]")
_NUL = re.compile("\x00")


@dataclass(frozen=True)
class StdioServer:
    """A server hookgate starts as a child process and talks to over stdin/stdout."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    """Set over the few variables the SDK passes on (HOME, PATH, USER, ...)."""
    cwd: Path | None = None
    """Where it starts: an agent file's server, its `cwd:` or the agent file's
    directory (where trust resolved what it runs); None (an editor's server, over
    ACP): the project directory."""
    timeout: float = DEFAULT_TIMEOUT
    start_timeout: float = DEFAULT_START_TIMEOUT
    sandbox: bool = False
    """Run it in the session's sandbox (off by default: servers are the operator's)."""


@dataclass(frozen=True)
class HttpServer:
    """A server already running, reached over streamable HTTP."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    start_timeout: float = DEFAULT_START_TIMEOUT


McpServerConfig = StdioServer | HttpServer


def parse_mcp_servers(value: Any, where: Where, base_dir: Path) -> dict[str, McpServerConfig]:
    """Validate the `mcp_servers:` mapping at `where`; relative `cwd`s start at `base_dir`."""
    if value is None:
        return {}
    node = expect_mapping(value, where, "MCP servers by name")
    servers: dict[str, McpServerConfig] = {}
    for name, entry in node.items():
        here = where.key(node, name)
        if not isinstance(name, str) or not _NAME.match(name) or "__" in name:
            raise here.error(
                f"invalid server name {name!r}",
                hint="letters, digits, '_' and '-', no '__': it becomes part of mcp__<server>__<tool>",
            )
        servers[name] = _server(name, expect_mapping(entry, here, "an MCP server"), here, base_dir)
    return servers


def _server(name: str, entry: Mapping[Any, Any], where: Where, base_dir: Path) -> McpServerConfig:
    if "command" in entry and "url" in entry:
        raise where.error(
            "both 'command' and 'url'",
            hint="'command' starts a stdio server; 'url' reaches a streamable HTTP one",
        )
    if "url" in entry:
        check_keys(entry, where, HTTP_KEYS)
        url = _string(entry, where, "url")
        if not url.startswith(("http://", "https://")):
            raise where.key(entry, "url").error(
                f"expected an http:// or https:// URL, got {url!r}",
                hint="e.g. url: http://127.0.0.1:8000/mcp",
            )
        return HttpServer(
            name, url, _headers(entry, where), _seconds(entry, where, "timeout", DEFAULT_TIMEOUT),
            _seconds(entry, where, "start_timeout", DEFAULT_START_TIMEOUT),
        )  # fmt: skip
    if "command" not in entry:
        raise where.error(
            "an MCP server needs 'command' (stdio) or 'url' (streamable HTTP)", hint=_EXAMPLE
        )
    check_keys(entry, where, STDIO_KEYS)
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(_passable(arg) for arg in args):
        raise where.key(entry, "args").error(
            f"expected a list of strings, got {describe(args)}",
            hint="quote numbers: args: [--port, '8080']",
        )
    cwd = _string(entry, where, "cwd") if "cwd" in entry else None
    return StdioServer(
        name,
        command=_string(entry, where, "command"),
        args=tuple(args),
        env=_environment(entry, where),
        # The agent file's directory, as for hooks: where trust resolved what it runs.
        cwd=(base_dir / (cwd if cwd is not None else ".")).resolve(),
        timeout=_seconds(entry, where, "timeout", DEFAULT_TIMEOUT),
        start_timeout=_seconds(entry, where, "start_timeout", DEFAULT_START_TIMEOUT),
        sandbox=_flag(entry, where, "sandbox"),
    )


def _flag(entry: Mapping[Any, Any], where: Where, key: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise where.key(entry, key).error(f"expected true or false, got {describe(value)}")
    return value


def _passable(value: Any) -> bool:
    """A string a program can be given: NUL is the one character no argv or env can hold."""
    return isinstance(value, str) and "\x00" not in value


def _string(entry: Mapping[Any, Any], where: Where, key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip() or not _passable(value):
        raise where.key(entry, key).error(f"expected a non-empty string, got {describe(value)}")
    return value


def _strings(
    entry: Mapping[Any, Any],
    where: Where,
    key: str,
    *,
    valid_name: Callable[[str], bool],
    hint: str,
    forbidden: re.Pattern[str],
) -> dict[str, str]:
    """A mapping of names to strings (`env`, `headers`); absent or null is empty."""
    value = entry.get(key)
    if value is None:
        return {}
    at = where.key(entry, key)
    node = expect_mapping(value, at, "names to values")
    for name, item in node.items():
        if not (isinstance(name, str) and valid_name(name)):
            raise at.key(node, name).error(f"invalid name {name!r}", hint=hint)
        if not isinstance(item, str):
            raise at.key(node, name).error(
                f"expected a string value, got {describe(item)}", hint="quote it: NAME: '1'"
            )
        if found := forbidden.search(item):
            raise at.key(node, name).error(f"{found.group()!r} cannot be passed on: {item!r}")
    return dict(node)


def _environment(entry: Mapping[Any, Any], where: Where) -> dict[str, str]:
    def valid(name: str) -> bool:
        return bool(name) and "=" not in name and "\x00" not in name

    hint = "a variable name, without '='"
    return _strings(entry, where, "env", valid_name=valid, hint=hint, forbidden=_NUL)


def _headers(entry: Mapping[Any, Any], where: Where) -> dict[str, str]:
    def valid(name: str) -> bool:
        return _HEADER_NAME.match(name) is not None

    hint = "a header name: letters, digits and !#$%&'*+-.^_`|~"
    return _strings(entry, where, "headers", valid_name=valid, hint=hint, forbidden=_UNSENDABLE)


def _seconds(entry: Mapping[Any, Any], where: Where, key: str, default: float) -> float:
    value = entry.get(key, default)
    try:
        seconds = float(value) if isinstance(value, int | float) else 0.0
    except OverflowError:  # a whole number past what a float holds
        seconds = 0.0
    if isinstance(value, bool) or not seconds > 0:
        raise where.key(entry, key).error(
            f"expected a positive number of seconds, got {describe(value)}"
        )
    return seconds
