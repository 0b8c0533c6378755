"""The hook configuration: the `hooks:` mapping of a YAML file, parsed once, strictly.

`parse_hooks` turns that mapping into a frozen `HooksConfig`; every mistake is a
`ConfigError` naming the file, line, key path and value. The order of each event's
list is the order its hooks run in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from types import MappingProxyType

from hookgate.hooks.errors import Collected, ConfigError
from hookgate.hooks.events import EVENT_NAMES, EVENTS, EventSpec, OnError, canonical_event
from hookgate.hooks.files.yamlfile import (
    Where,
    check_keys,
    describe,
    did_you_mean,
    expect_mapping,
)
from hookgate.hooks.formats import FORMATS, ReplyFormat
from hookgate.hooks.kinds.keys import (
    args_of,
    check_kind_keys,
    env_of,
    http_target,
    model_target,
    persistent_of,
    python_hook_of,
)
from hookgate.hooks.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # each kind's module is imported by the first hook of that kind
    from typing import Any

    from hookgate.hooks.kinds.http.target import HttpTarget
    from hookgate.hooks.kinds.model.target import ModelTarget
    from hookgate.hooks.kinds.python import HookCallable

DEFAULT_SHELL = "/bin/sh"
#: The longest timeout a hook may ask for; a hook sits in the middle of the turn.
MAX_TIMEOUT = 3600.0
HOOK_KEYS = (
    "name", "command", "args", "python", "http", "shell", "matcher", "timeout",
    "onError", "format", "env", "cwd", "persistent", "model", "instructions", "input_budget",
)  # fmt: skip
KINDS = ("command", "args", "python", "http", "model")
#: A duration with its unit; compiled (and cached) by `re` at its first use, not at import.
_DURATION = r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$"
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}

_PASTED_HINT = (
    "write each of its hooks as one entry, e.g. PreToolUse: [{matcher: Bash, format: claude, "
    "command: ./guard.sh}] (hookgate hooks import-claude prints them all), or leave it in "
    ".claude/settings.json and set claude_settings: true"
)


class HookSpec(NamedTuple):
    """One configured hook, validated: exactly one of command, args, function, http or
    model is set."""

    event: EventSpec
    name: str
    timeout: float
    on_error: OnError
    format: str = "native"
    command: str | None = None
    args: tuple[str, ...] | None = None
    function: HookCallable | None = None
    python: str | None = None
    """The `python:` reference (`package.module:function`) the function came from."""
    http: HttpTarget | None = None
    model: ModelTarget | None = None
    """A checker model that judges the event (the `model` kind)."""
    shell: str = DEFAULT_SHELL
    matcher: re.Pattern[str] | None = None
    env: Mapping[str, str] = MappingProxyType({})
    cwd: str | None = None
    origin: str = ""
    """Where the hook was defined, `file:line`, for messages."""
    persistent: bool = False
    """Started once per session and asked event after event (`hooks.persistent`)."""
    listed_as: str = ""
    """The phase name of another format (`PreToolUse`) the entry is listed under while it
    names no `format:`, so speaks the native one: a Mecatl hook that lacks `format: mecatl`
    (linting warns)."""
    matcher_text: str | None = None
    """The matcher as the file writes it (`Bash`), for messages: `matcher` is compiled."""

    @property
    def matcher_shown(self) -> str:
        """The matcher as written, quoted for a listing: `'^shell$'`, `'Bash'` ("" if none)."""
        if self.matcher is None:
            return ""
        text = self.matcher_text if self.matcher_text is not None else self.matcher.pattern
        return f"'{text}'"

    def argv(self) -> tuple[str, ...]:
        """The command line the hook runs as (empty for a Python callable or an http hook)."""
        if self.args is not None:
            return self.args
        if self.command is not None:
            return (self.shell, "-c", self.command)
        return ()

    def matches(self, target: str | None) -> bool:
        """Whether the hook runs for this tool or agent name."""
        if self.matcher is None:
            return True
        return target is not None and self.matcher.search(target) is not None


class HooksConfig:
    """Every event's hooks, in order, as read once at session start; immutable.

    Iterating it gives every hook, event by event in the order of `EVENTS`. A plain
    class rather than a NamedTuple, which would iterate over its fields instead, or a
    dataclass: `dataclasses` imports `inspect`, ~18 ms of every start of an embedder.
    """

    __slots__ = ("hooks", "never_fires", "settings_files", "source")

    hooks: Mapping[str, tuple[HookSpec, ...]]
    source: str
    never_fires: tuple[str, ...]
    """Hooks of Claude Code settings files that cannot run here, each with why."""
    settings_files: tuple[Path, ...]
    """The Claude Code settings files `claude_settings:` names, whether they exist or not."""

    def __init__(
        self,
        hooks: Mapping[str, tuple[HookSpec, ...]] = MappingProxyType({}),
        source: str = "",
        never_fires: tuple[str, ...] = (),
        settings_files: tuple[Path, ...] = (),
    ) -> None:
        object.__setattr__(self, "hooks", hooks)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "never_fires", never_fires)
        object.__setattr__(self, "settings_files", settings_files)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"HooksConfig is immutable: cannot set {name!r}")

    def __iter__(self) -> Iterator[HookSpec]:
        for event in EVENTS:
            yield from self.for_event(event)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HooksConfig):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"HooksConfig({fields})"

    def for_event(self, event: str) -> tuple[HookSpec, ...]:
        return self.hooks.get(event, ())


def parse_hooks(
    node: Any, where: Where, *, base_dir: Path, import_python: bool = True
) -> HooksConfig:
    """Validate the `hooks:` mapping found at `where`; `base_dir` anchors relative `cwd`.

    With `import_python=False` a `python:` hook's module is not imported (nothing of
    the file runs): its `function` then refuses to be called.
    """
    if node is None:
        return HooksConfig(source=where.file)
    node = expect_mapping(node, where, "a mapping of event names to lists of hooks")
    hooks: dict[str, tuple[HookSpec, ...]] = {}
    found = Collected()
    for raw_name, entries in node.items():
        at = where.key(node, raw_name)
        spec = found.run(partial(_event_of, raw_name, at, hooks))
        if spec is None:
            continue
        if entries is None:
            entries = []
        if not isinstance(entries, list):
            found.errors.append(at.error(f"expected a list of hooks, got {describe(entries)}"))
            continue
        parsed: list[HookSpec | None] = []
        for i, entry in enumerate(entries):
            here = at.item(entries, i)
            parsed.append(found.run(partial(
                parse_hook, entry, spec, here, base_dir=base_dir,
                import_python=import_python, listed_as=str(raw_name),
            )))  # fmt: skip
        hooks[spec.name] = tuple(hook for hook in parsed if hook is not None)
    found.raise_any()
    return HooksConfig(hooks=hooks, source=where.file)


def _event_of(raw_name: Any, at: Where, seen: Mapping[str, object]) -> EventSpec:
    """The event a key of `hooks:` names; each mistake with the fix it most likely needs."""
    spec = canonical_event(str(raw_name))
    if spec is None and raw_name == "hooks":
        raise at.error("a whole Claude Code settings 'hooks' block, nested", hint=_PASTED_HINT)
    if spec is None:
        hint = event_hint(str(raw_name)) or "events: " + ", ".join(EVENTS)
        raise at.error(f"unknown event {raw_name!r}", hint=hint)
    if spec.name in seen:
        raise at.error(f"{raw_name!r} repeats event {spec.name!r} under another spelling")
    return spec


def event_hint(name: str) -> str | None:
    """Did-you-mean for an event name: hookgate's spelling first (`onSessionStart` is
    `sessionStart`), Claude's where only it is close."""
    return did_you_mean(name, EVENTS) or did_you_mean(name, EVENT_NAMES)


def parse_hook(
    node: Any,
    event: EventSpec,
    where: Where,
    *,
    base_dir: Path,
    import_python: bool = True,
    listed_as: str = "",
) -> HookSpec:
    """Validate one hook entry of `event`'s list, found under the key `listed_as`."""
    node = expect_mapping(node, where, "a hook")
    if isinstance(node.get("hooks"), list) and not set(node) & set(KINDS):
        raise where.error(
            "this is a Claude Code settings block ({matcher, hooks: [...]}), not a hook",
            hint=_PASTED_HINT,
        )
    check_keys(node, where, HOOK_KEYS)
    kinds = [key for key in KINDS if key in node]
    if len(kinds) != 1:
        found = " and ".join(kinds) or "none of them"
        raise where.error(
            f"a hook needs exactly one of command, args, python, http or model; found {found}",
            hint="command: 'a shell command line', args: [program, arg, ...], "
            "python: package.module:function, http: {url: 'https://...'}, "
            "model: {name: ..., base_url: ...} with instructions: ...",
        )
    kind = kinds[0]
    check_kind_keys(node, where, kind)
    format_name = _choice(node, where, "format", tuple(FORMATS), "native")
    fmt = FORMATS[format_name]
    if not fmt.supports(event):
        raise where.key(node, "format").error(
            f"format {format_name!r} has no counterpart of event {event.name!r}",
            hint="use format: native for this event",
        )
    # A checker that cannot answer must not let the call through.
    default_on_error = OnError.FAIL if kind == "model" else fmt.on_error_for(event)
    on_error = OnError(_choice(node, where, "onError", tuple(e.value for e in OnError),
                               default_on_error.value))  # fmt: skip
    return HookSpec(
        event=event,
        name=_string(node, where, "name") or _default_name(node, kind),
        timeout=_timeout(node, where, fmt.timeout_for(event)),
        on_error=on_error,
        format=format_name,
        command=_string(node, where, "command", required=kind == "command"),
        args=args_of(node, where) if kind == "args" else None,
        http=http_target(node, where) if kind == "http" else None,
        function=python_hook_of(node, where, base_dir, import_python) if kind == "python" else None,
        python=str(node["python"]) if kind == "python" else None,
        model=model_target(node, where, event, base_dir) if kind == "model" else None,
        shell=_string(node, where, "shell") or DEFAULT_SHELL,
        matcher=_matcher(node, where, event, fmt),
        matcher_text=node["matcher"] if isinstance(node.get("matcher"), str) else None,
        env=env_of(node, where),
        cwd=_cwd(node, where, base_dir),
        origin=f"{where.file}:{where.line}" if where.line else where.file,
        persistent=persistent_of(node, where, kind),
        listed_as=listed_as if listed_as not in ("", event.name) and "format" not in node else "",
    )


def parse_duration(value: Any) -> float | None:
    """Seconds from `10`, `2.5`, `500ms`, `10s` or `1m`; None when it is none of those."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return float(value) if abs(value) <= MAX_TIMEOUT else None  # float() of 10**400 raises
    if isinstance(value, float):
        return value
    if isinstance(value, str) and (match := re.match(_DURATION, value)):
        return float(match.group(1)) * _UNITS[match.group(2)]
    return None


def _default_name(node: Mapping[Any, Any], kind: str) -> str:
    value = node[kind]
    if kind == "http" and isinstance(value, Mapping):
        value = value.get("url", "http")
    if kind == "model":
        value = f"model {value.get('name', '') if isinstance(value, Mapping) else value}"
    text = " ".join(str(a) for a in value) if isinstance(value, list) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:39] + "…"


def _string(
    node: Mapping[Any, Any], where: Where, key: str, *, required: bool = False
) -> str | None:
    if key not in node:
        return None
    value = node[key]
    if not isinstance(value, str) or (required and not value.strip()):
        raise where.key(node, key).error(f"expected a non-empty string, got {describe(value)}")
    if "\x00" in value:  # no program can receive it: refuse now, not at the first event
        raise where.key(node, key).error(f"a NUL character cannot be passed on: {value!r}")
    return value


def _choice(
    node: Mapping[Any, Any], where: Where, key: str, choices: tuple[str, ...], default: str
) -> str:
    value = node.get(key, default)
    if value not in choices:
        hint = did_you_mean(str(value), choices) or f"one of: {', '.join(choices)}"
        raise where.key(node, key).error(f"{value!r} is not one of {', '.join(choices)}", hint=hint)
    return str(value)


def _timeout(node: Mapping[Any, Any], where: Where, default: float) -> float:
    if "timeout" not in node:
        return default
    seconds = parse_duration(node["timeout"])
    if seconds is None or not 0 < seconds <= MAX_TIMEOUT:
        raise where.key(node, "timeout").error(
            f"expected a duration above 0 and at most {MAX_TIMEOUT:g}s, got {describe(node['timeout'])}",
            hint="seconds as a number, or a string such as '500ms', '10s', '2m'",
        )
    return seconds


def _matcher(
    node: Mapping[Any, Any], where: Where, event: EventSpec, fmt: ReplyFormat
) -> re.Pattern[str] | None:
    if "matcher" not in node:
        return None
    at = where.key(node, "matcher")
    if event.match_on.value == "nothing":
        raise at.error(f"event {event.name!r} has no tool or agent name to match",
                       hint="remove the matcher")  # fmt: skip
    value = node["matcher"]
    if not isinstance(value, str):
        raise at.error(f"expected a regular expression string, got {describe(value)}")
    try:
        return fmt.compile_matcher(value)
    except (re.error, OverflowError, RecursionError) as exc:  # `a{99999999999}`, deep nesting
        raise at.error(f"invalid regular expression {value!r}: {exc}") from exc


def _cwd(node: Mapping[Any, Any], where: Where, base_dir: Path) -> str | None:
    value = _string(node, where, "cwd")
    if value is None:
        return None
    path = base_dir / value
    try:  # noqa: SIM105 (not `contextlib.suppress`: its import is 2 % of a `hooks fire`)
        path = path.resolve()
    except ValueError:  # an embedded NUL byte: is_dir() says no below
        pass
    if not path.is_dir():
        raise where.key(node, "cwd").error(f"{value!r} is not a directory ({path})")
    return str(path)


def callable_hook(
    event: str,
    function: HookCallable,
    *,
    name: str | None = None,
    matcher: str | None = None,
    timeout: float = 10.0,
    on_error: str | None = None,
) -> HookSpec:
    """A hook made of a Python callable, for `HookEngine(..., extra=[...])`."""
    spec = canonical_event(event)
    if spec is None:
        raise ConfigError(f"unknown event {event!r}", hint=event_hint(event))
    return HookSpec(
        event=spec,
        name=name or str(getattr(function, "__qualname__", repr(function))),
        timeout=timeout,
        on_error=OnError(on_error) if on_error else spec.default_on_error,
        function=function,
        matcher=re.compile(matcher) if matcher else None,
        matcher_text=matcher or None,
        origin="python",
    )
