"""What a tool is (`Tool`), what it gets (`ToolContext`) and gives back (`ToolResult`).

A tool never raises for a failure of its own: a missing file, a bad argument or a
failed command is a `ToolResult` with `is_error=True` whose content says what went
wrong. Only `asyncio.CancelledError` leaves `Tool.run`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from hookgate.errors import ToolError
from hookgate.hooks.records import NamedTuple
from hookgate.messages import ToolSpec
from hookgate.tools.sandbox.settings import Mode, SandboxSettings
from hookgate.tools.settings import ShellLimits, WebLimits

#: Characters of a bad argument's value quoted in an error message.
VALUE_EXCERPT = 60

_JSON_TYPES: Mapping[str, tuple[str, tuple[type, ...]]] = {
    "string": ("a string", (str,)),
    "integer": ("an integer", (int,)),
    "number": ("a number", (int, float)),
    "boolean": ("true or false", (bool,)),
}


class ToolResult(NamedTuple):
    """A tool's output as the model sees it; `is_error` marks a failed call."""

    content: str
    is_error: bool = False
    denied: bool = False
    """The call never ran: a hook, a permission rule or the user refused it (never sent to
    hooks or the model, which read `content`)."""

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "is_error": self.is_error}


class ToolContext(NamedTuple):
    """Where and how tools run: relative paths start at `project_dir`.

    `env` is the complete environment of the processes a tool starts (secrets already
    dropped); `shell_timeout` is the most seconds a shell command may run; `output_cap`
    bounds, in bytes, the output a tool hands back. The rest bounds where the tools
    reach: `sandbox.Boundaries.of(ctx)` makes it the one table the file tools and the
    shell's sandbox read.
    """

    project_dir: Path
    env: Mapping[str, str]
    shell_timeout: float = 120.0
    output_cap: int = 64 * 1024
    workspace_dirs: tuple[Path, ...] = ()
    """Resolved directories the file tools reach without consent, besides `project_dir`."""
    hookgate_home: Path | None = None
    """Resolved `$HOOKGATE_HOME`: no file tool reaches it, reads included."""
    protected_files: frozenset[Path] = frozenset()
    """Resolved paths the model's file tools never write: the agent file's trust closure."""
    runs_from: frozenset[Path] = frozenset()
    """Folders the programs hookgate starts outside the sandbox run from, never written
    either: the packages a hook runs (`.venv`, `node_modules`), `PATH` directories."""
    shell_limits: ShellLimits = ShellLimits()
    web: WebLimits = WebLimits()
    sandbox: SandboxSettings = SandboxSettings(Mode.OFF)
    """The OS sandbox of shell commands; the agent file's default is `workspace-write`."""
    private_tmp: Path | None = None
    """The session's own temporary directory, writable by its confined commands."""


class Tool(Protocol):
    """A tool the model can call: built in, or from an MCP server."""

    @property
    def spec(self) -> ToolSpec:
        """Name, description and the JSON Schema of the arguments."""
        ...

    @property
    def needs_consent(self) -> bool:
        """True for a tool that changes things or runs commands; False for read-only ones."""
        ...

    async def run(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """Run once with `arguments`; every failure is an `is_error` result, never an exception."""
        ...


class ToolRegistry:
    """The tools of an agent, by name, in the order they were added."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        """Register `tool`; a second tool with the same name raises `ValueError`."""
        name = tool.spec.name
        if name in self._tools:
            raise ValueError(f"a tool named {name!r} is already registered")
        self._tools[name] = tool

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or None when there is none."""
        return self._tools.get(name)

    def specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)


class BuiltinTool(ABC):
    """Base of the built-in tools: checks the arguments against `spec`, turns failures into results.

    Subclasses set `spec` and `needs_consent` and implement `execute`, which may raise
    `ToolError` (or `OSError`) for a failure the model should read about.
    """

    spec: ToolSpec
    needs_consent: bool

    async def run(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            checked = check_arguments(self.spec.parameters, arguments)
            return await self.execute(checked, ctx)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        except OSError as exc:
            return ToolResult(f"{self.spec.name}: {exc}", is_error=True)
        except Exception as exc:  # a bug of ours must still not end the turn
            return ToolResult(
                f"{self.spec.name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True
            )

    @abstractmethod
    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """Do the work with checked `args` (defaults filled in)."""


def object_schema(properties: Mapping[str, Any], *required: str) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments: these `properties`, no others."""
    return {"type": "object", "properties": dict(properties), "required": list(required),
            "additionalProperties": False}  # fmt: skip


def check_arguments(schema: Mapping[str, Any], arguments: object) -> dict[str, Any]:
    """Check `arguments` against an object `schema`; return them with defaults filled in.

    Understands the subset the built-in schemas use: `properties` with a scalar
    `type`, `minimum` and `default`, `required`, and `additionalProperties: false`.
    A null optional argument counts as absent. Raises `ToolError` naming the argument.
    """
    if not isinstance(arguments, Mapping):
        raise ToolError(f"the arguments must be a JSON object, got {_excerpt(arguments)}")
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    checked: dict[str, Any] = {}
    for name, value in arguments.items():
        if name not in properties:
            if schema.get("additionalProperties", True) is False:
                expected = ", ".join(properties) or "none"
                raise ToolError(f"unknown argument {name!r} (expected: {expected})")
            checked[name] = value
        elif value is not None or name in required:
            checked[name] = _check_value(name, properties[name], value)
    for name, prop in properties.items():
        if name not in checked:
            if name in required:
                raise ToolError(f"missing required argument {name!r}")
            if "default" in prop:
                checked[name] = prop["default"]
    return checked


def _check_value(name: str, prop: Mapping[str, Any], value: Any) -> Any:
    kind = str(prop.get("type"))
    if kind in _JSON_TYPES:
        wanted, types = _JSON_TYPES[kind]
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)  # 10.0 from a model means 10
        # bool is an int in Python, but true is not a number in JSON
        if not isinstance(value, types) or (kind != "boolean" and isinstance(value, bool)):
            raise ToolError(f"argument {name!r} must be {wanted}, got {_excerpt(value)}")
    minimum = prop.get("minimum")
    if minimum is not None and value < minimum:
        raise ToolError(f"argument {name!r} must be at least {minimum}, got {value!r}")
    return value


def _excerpt(value: object) -> str:
    text = repr(value)
    return text if len(text) <= VALUE_EXCERPT else text[: VALUE_EXCERPT - 3] + "..."
