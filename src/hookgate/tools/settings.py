"""The agent file's settings for the tools: `workspace`, `shell` and the per-reply caps.

Parsed strictly, like the rest of the agent file, into immutable records: an unknown
key or a bad value names the file, line, key path and value.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks.config import MAX_TIMEOUT, parse_duration
from hookgate.hooks.files.yamlfile import Where, check_keys, describe, expect_mapping
from hookgate.hooks.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Tool calls one model reply may make; the calls past it fail with a message.
DEFAULT_MAX_TOOL_CALLS = 64
#: Bytes of JSON arguments one tool call may carry.
DEFAULT_MAX_ARGUMENT_BYTES = 1024 * 1024
#: Variables whose name holds one of these words are kept from the shell tool.
SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL")
SHELL_KEYS = ("env", "limits")
#: The largest limit setrlimit(2) takes as a number on every 64-bit Linux.
MAX_LIMIT = 2**62
LIMIT_KEYS = ("processes", "cpu_seconds", "file_size")
WEB_KEYS = ("allow_private", "max_bytes", "timeout")


#: Processes a shell command may start, beyond those the user already runs: enough for
#: any build, few enough that a fork bomb stops before the machine does.
DEFAULT_SHELL_PROCESSES = 512


class ShellLimits(NamedTuple):
    """setrlimit(2) values for a shell command and all it starts; None: as inherited."""

    processes: int | None = DEFAULT_SHELL_PROCESSES
    """New processes allowed beyond the user's running ones (RLIMIT_NPROC; root is exempt)."""
    cpu_seconds: int | None = None
    """CPU seconds each process may use (RLIMIT_CPU)."""
    file_size: int | None = None
    """Bytes a file the command writes may grow to (RLIMIT_FSIZE)."""


#: Bytes of a web page `web_fetch` reads at most; the rest is cut, and the cut said.
DEFAULT_WEB_MAX_BYTES = 2 * 1024 * 1024
#: Seconds one `web_fetch` call may take, redirects included.
DEFAULT_WEB_TIMEOUT = 30.0


class WebLimits(NamedTuple):
    """What `web_fetch` may reach and read (the agent file's `web_fetch:` settings)."""

    allow_private: bool = False
    """Loopback, private, link-local and other non-public addresses may be fetched."""
    max_bytes: int = DEFAULT_WEB_MAX_BYTES
    timeout: float = DEFAULT_WEB_TIMEOUT


class ShellSettings(NamedTuple):
    keep_env: tuple[str, ...] = ()
    """Variables kept in the shell's environment though their name looks secret."""
    limits: ShellLimits = ShellLimits()


def shell_environment(env: Mapping[str, str], keep: tuple[str, ...]) -> dict[str, str]:
    """`env` without the variables whose name holds a `SECRET_WORDS` word, unless kept.

    The words are looked for in the upper-cased name: `github_token` is dropped too.
    """
    return {
        name: value
        for name, value in env.items()
        if name in keep or not any(word in name.upper() for word in SECRET_WORDS)
    }


def section(
    node: Mapping[Any, Any], where: Where, key: str, keys: tuple[str, ...]
) -> tuple[Mapping[Any, Any], Where] | None:
    """The mapping at `key` with only `keys` in it, and where it is; None when absent."""
    if node.get(key) is None:
        return None
    at = where.key(node, key)
    section = expect_mapping(node[key], at, f"{key} settings ({', '.join(keys)})")
    check_keys(section, at, keys)
    return section, at


def parse_workspace(document: Mapping[Any, Any], where: Where, base_dir: Path) -> tuple[Path, ...]:
    """`workspace: {dirs: [...]}`: resolved directories, relative ones from `base_dir`."""
    if (found := section(document, where, "workspace", ("dirs",))) is None:
        return ()
    node, at = found
    return directories(node, at, "dirs", base_dir)


def directories(node: Mapping[Any, Any], at: Where, key: str, base_dir: Path) -> tuple[Path, ...]:
    """The list of existing directories at `key` of `node`, resolved from `base_dir`."""
    dirs = node.get(key, [])
    here = at.key(node, key)
    if not isinstance(dirs, list):
        raise here.error(f"expected a list of directories, got {describe(dirs)}")
    resolved: list[Path] = []
    for index, item in enumerate(dirs):
        if not isinstance(item, str) or not item.strip() or "\x00" in item:
            raise here.item(dirs, index).error(f"expected a directory path, got {describe(item)}")
        path = (base_dir / Path(item).expanduser()).resolve()
        if not path.is_dir():
            raise here.item(dirs, index).error(
                f"{item!r} is not a directory ({path})",
                hint="a relative path starts at the agent file's directory",
            )
        resolved.append(path)
    return tuple(resolved)


def parse_shell(document: Mapping[Any, Any], where: Where) -> ShellSettings:
    """`shell: {env: {keep: [...]}, limits: {processes, cpu_seconds, file_size}}`."""
    if (found := section(document, where, "shell", SHELL_KEYS)) is None:
        return ShellSettings()
    node, at = found
    keep: tuple[str, ...] = ()
    if (env_found := section(node, at, "env", ("keep",))) is not None:
        env, env_at = env_found
        names = env.get("keep", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise env_at.key(env, "keep").error(
                f"expected a list of variable names, got {describe(names)}"
            )
        keep = tuple(names)
    return ShellSettings(keep_env=keep, limits=_limits(node, at))


def _limits(node: Mapping[Any, Any], where: Where) -> ShellLimits:
    if (found := section(node, where, "limits", LIMIT_KEYS)) is None:
        return ShellLimits()
    limits, at = found
    values: dict[str, int | None] = {}
    for key in LIMIT_KEYS:
        if key not in limits:
            continue
        value = limits[key]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 0 < value <= MAX_LIMIT):  # fmt: skip
            raise at.key(limits, key).error(
                f"expected a positive whole number up to {MAX_LIMIT} (or null for no limit), "
                f"got {describe(value)}"
            )
        values[key] = value
    return ShellLimits(**values)


def parse_web_fetch(document: Mapping[Any, Any], where: Where) -> WebLimits:
    """`web_fetch: {allow_private, max_bytes, timeout}`: what the `web_fetch` tool may do."""
    if (found := section(document, where, "web_fetch", WEB_KEYS)) is None:
        return WebLimits()
    node, at = found
    defaults = WebLimits()
    allow_private = node.get("allow_private", False)
    if not isinstance(allow_private, bool):
        raise at.key(node, "allow_private").error(
            f"expected true or false, got {describe(allow_private)}"
        )
    max_bytes = node.get("max_bytes", defaults.max_bytes)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
        raise at.key(node, "max_bytes").error(
            f"expected a positive whole number of bytes, got {describe(max_bytes)}"
        )
    timeout = parse_duration(node.get("timeout", defaults.timeout))
    if timeout is None or not 0 < timeout <= MAX_TIMEOUT:
        raise at.key(node, "timeout").error(
            f"expected a duration above 0 and at most {MAX_TIMEOUT:g}s, "
            f"got {describe(node.get('timeout'))}",
            hint="e.g. timeout: 10s",
        )
    return WebLimits(allow_private=allow_private, max_bytes=max_bytes, timeout=timeout)
