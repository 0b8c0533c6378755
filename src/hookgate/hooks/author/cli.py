"""The hook author's commands: `hookgate hooks check | fire | schema`.

Stable on purpose, scripts and CI run them. `check` validates and lists (`--strict`:
warnings fail too); `fire` runs an event's hooks as the agent would and prints the
outcome as JSON (exit 0 allowed, 2 blocked, 1 config error); `schema` prints the JSON
Schemas of an event. An application that embeds the engine passes its own
`load_config`, which validates its whole file (hookgate's checks the agent file).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from hookgate.hooks.config import HooksConfig, HookSpec
from hookgate.hooks.configfile import load_hooks_file
from hookgate.hooks.errors import ConfigError
from hookgate.hooks.events import EVENT_NAMES, EVENTS, EventSpec, MatchOn, canonical_event
from hookgate.hooks.files.digest import sha256
from hookgate.hooks.files.yamlfile import did_you_mean
from hookgate.hooks.formats import FORMATS
from hookgate.hooks.process import adopt_orphans_at_first_start
from hookgate.hooks.runner import HookEngine, Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any, TypeAlias

DEFAULT_CONFIG = Path("hookgate.yaml")
OfferedTools = Callable[[Path], "tuple[str, ...] | None"]
EXIT_OK, EXIT_ERROR, EXIT_BLOCKED = 0, 1, 2

#: Reads a file's hooks, validating what else the application's file holds; the flag
#: says whether `python:` hooks may be imported (`check` imports nothing).
ConfigLoader = Callable[[Path, bool], HooksConfig]
#: What the runtime adds to `check` about a config file: lines to print, and warnings.
AgentReport = Callable[[Path], "tuple[list[str], list[str]]"]
#: Registers the runtime's own `hooks` commands on the subparsers it is given.
MoreCommands: TypeAlias = "Callable[[Any], None]"


def _load_hooks_only(path: Path, import_python: bool) -> HooksConfig:
    return load_hooks_file(path, import_python=import_python)


def add_parser(
    subparsers: Any,
    *,
    load_config: ConfigLoader = _load_hooks_only,
    offered_tools: OfferedTools = lambda _: None,
    agent_report: AgentReport = lambda _: ([], []),
    more_commands: MoreCommands = lambda _: None,
    test_schema: Callable[[], Any] | None = None,
) -> None:
    """Register `hooks` and its commands on the main CLI's subparsers.

    `load_config` reads a config file (hookgate's validates a whole agent file);
    `offered_tools` names the tools a config file's agent offers (None: unknown), so
    that `check` can warn about a matcher that matches none of them; `agent_report`
    says what else `check` shows of an agent file (hookgate's: its sandbox on this
    machine, its permission rules);
    `more_commands` adds the runtime's commands (`test`, `replay`), and `test_schema`
    gives the schema `schema --tests` prints.
    """
    hooks = subparsers.add_parser("hooks", help="check, fire and describe hooks")
    hooks.set_defaults(load_config=load_config)
    commands = hooks.add_subparsers(dest="hooks_command", required=True, metavar="COMMAND")
    config_help = f"the agent file, or a file of hooks alone (default: ./{DEFAULT_CONFIG})"

    check = commands.add_parser(
        "check",
        help="validate the config and list each event's hooks (runs and imports none of them)",
    )
    check.add_argument(
        "file", nargs="?", type=Path, help=f"the same as --agent FILE ({config_help})"
    )
    _add_file_option(check, config_help)
    check.add_argument("--strict", action="store_true", help="fail on warnings too (for CI)")
    check.set_defaults(handler=run_check, offered_tools=offered_tools, agent_report=agent_report)

    fire = commands.add_parser(
        "fire",
        help="run an event's hooks on JSON read from stdin, now: your explicit request, so "
        "without the trust check the agent's entry points make",
    )
    fire.add_argument("event", help="event name, either spelling")
    _add_file_option(fire, config_help)
    fire.add_argument("--tool", help="tool name, for tool events (matchers test it)")
    fire.add_argument("--agent-name", metavar="NAME",
                      help="the asked agent's name, for hand-off events (matchers test it)")  # fmt: skip
    fire.add_argument("--call-id", metavar="ID",
                      help="the tool call's id, for tool events (default: one made from the "
                           "tool and its input, the same on every run)")  # fmt: skip
    fire.set_defaults(handler=run_fire)

    migrate = commands.add_parser(
        "import-claude", help="print the hooks: block of a project's Claude Code settings"
    )
    migrate.add_argument("dir", nargs="?", type=Path, default=Path("."),
                         help="the project whose .claude/ to read (default: .)")  # fmt: skip
    migrate.set_defaults(handler=run_import_claude)

    schema = commands.add_parser("schema", help="print the JSON Schemas of an event")
    schema.add_argument(
        "event", nargs="?" if test_schema else None, help="event name, either spelling"
    )
    schema.add_argument("--format", default="native", choices=sorted(FORMATS))
    if test_schema is not None:
        schema.add_argument("--tests", action="store_true",
                            help="print the JSON Schema of a test file (hooks test) instead")  # fmt: skip
    schema.set_defaults(handler=run_schema, test_schema=test_schema)
    more_commands(commands)


#: `fire`'s options, as `add_parser` defines them: each takes one value, and sets this
#: attribute (`--agent` and `--config` a `Path`).
FIRE_OPTIONS = {
    "--agent": "config", "--config": "config", "--tool": "tool", "--agent-name": "agent_name",
    "--call-id": "call_id",
}  # fmt: skip


def fire_arguments(words: Sequence[str]) -> dict[str, Any] | None:
    """The arguments of `hooks fire` from the words after it, read as argparse reads
    them (`add_parser`), or None where argparse is needed (`plain_line`), or where the
    event is missing or one too many. Those lines are argparse's to read, to answer or
    to refuse.

    A program that runs `hooks fire` on every event of another agent's pays for
    argparse's start-up (with gettext's, ~9 % of a `fire`) where its line is the usual
    `fire EVENT --tool NAME`: that line needs none of it.
    """
    line = plain_line(words, FIRE_OPTIONS)
    if line is None or len(line[1]) != 1:
        return None
    given, (event,) = line
    return {
        "config": Path(given.get("config", DEFAULT_CONFIG)), "tool": given.get("tool"),
        "agent_name": given.get("agent_name"), "call_id": given.get("call_id"), "event": event,
    }  # fmt: skip


def plain_line(
    words: Sequence[str], options: Mapping[str, str]
) -> tuple[dict[str, str], list[str]] | None:
    """A command's words read as argparse reads a line of positionals and `options`
    that each take one value (an option written whole, mapped to the attribute it
    sets): those values, and the positionals in order. None where argparse is needed:
    any other option (help, an abbreviation, `--option=value`, `--`), an option
    without its value, or a value or a positional that starts with `-`."""
    values: dict[str, str] = {}
    positionals: list[str] = []
    given = iter(words)
    for word in given:
        if not word.startswith("-"):
            positionals.append(word)
            continue
        value = next(given, None)
        if word not in options or value is None or value.startswith("-"):
            return None
        values[options[word]] = value
    return values, positionals


def _add_file_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    # `--agent FILE` everywhere hookgate takes an agent file; `--config` stays an alias.
    parser.add_argument("--agent", "--config", dest="config", type=Path, metavar="FILE",
                        default=DEFAULT_CONFIG, help=help_text)  # fmt: skip


def run_check(args: argparse.Namespace) -> int:
    from hookgate.hooks.author.lint import lint_hooks  # `check` alone runs the linter

    if args.file is not None:  # `hooks check FILE`, as `hookgate trust FILE` takes it
        args.config = args.file
    config = args.load_config(args.config, False)
    project_dir = args.config.resolve().parent
    count = sum(1 for _ in config)
    print(f"{args.config}: valid, {count} hook{'s' if count != 1 else ''}")
    warnings = 0
    for event in EVENTS.values():
        hooks = config.for_event(event.name)
        if not hooks:
            continue
        print(f"\n{event.name}  ({event.fires})")
        found = lint_hooks(hooks, project_dir)
        for index, (hook, hook_warnings) in enumerate(zip(hooks, found, strict=True), 1):
            print(f"  {index}. {_describe(hook)}")
            offered = args.offered_tools(args.config)
            matcher_warnings = [*_matcher_warnings(hook, offered), *_team_warnings(hook, offered)]
            for warning in [*matcher_warnings, *hook_warnings]:
                warnings += 1
                print(f"     warning: {warning}", file=sys.stderr)
    if config.never_fires:
        print("\nnever fires here (from Claude Code settings):")
        for line in config.never_fires:
            print(f"  - {line}")
    lines, report_warnings = args.agent_report(args.config)
    if lines:
        print()
        print("\n".join(lines))
    for warning in report_warnings:
        warnings += 1
        print(f"warning: {warning}", file=sys.stderr)
    if warnings:
        print(f"\n{warnings} warning{'s' if warnings != 1 else ''}", file=sys.stderr)
    return EXIT_ERROR if warnings and args.strict else EXIT_OK


#: Events that fire only in a team's supervisor: the agent offered `create_task`.
_TEAM_EVENTS = ("taskCreated", "taskCompleted", "teammateIdle")


def _team_warnings(hook: HookSpec, offered: tuple[str, ...] | None) -> list[str]:
    if offered is None or hook.event.name not in _TEAM_EVENTS or "create_task" in offered:
        return []
    return [
        f"{hook.event.name} fires only for a team's supervisor and this file declares no "
        "'team:'; this hook never fires here"
    ]


def _matcher_warnings(hook: HookSpec, offered: tuple[str, ...] | None) -> list[str]:
    """A tool matcher that matches no tool offered, with the closest tool's name."""
    if offered is None or hook.matcher is None or hook.event.match_on is not MatchOn.TOOL:
        return []
    name = FORMATS[hook.format].match_name
    if any(hook.matches(name(tool)) for tool in offered):
        return []
    names = [name(tool) for tool in offered]
    said = (f"matcher {hook.matcher_shown} matches no tool this agent offers "
            f"({', '.join(names)}); the hook never runs")  # fmt: skip
    written = hook.matcher_text if hook.matcher_text is not None else hook.matcher.pattern
    guess = did_you_mean(written.strip("^$"), names)
    return [f"{said}; {guess}" if guess else said]


def run_fire(args: argparse.Namespace) -> int:
    event = _event(args.event)
    config = args.load_config(args.config, True)
    text = sys.stdin.read()
    try:
        given = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"stdin is not JSON: {exc}", hint=_input_hint(event)) from exc
    payload = payload_from_input(
        event, given, tool=args.tool, agent=args.agent_name, call_id=args.call_id
    )
    adopt_orphans_at_first_start()
    engine = HookEngine(
        config,
        session_id=f"fire-{os.urandom(6).hex()}",  # uuid costs ~5 ms to import
        project_dir=str(args.config.resolve().parent),
    )
    try:
        outcome = engine.run_sync(event.name, payload)
    finally:
        engine.close()
    print(json.dumps(outcome_json(event, outcome), indent=2, ensure_ascii=False))
    return EXIT_BLOCKED if outcome.blocked else EXIT_OK


def run_import_claude(args: argparse.Namespace) -> int:
    from hookgate.hooks.claude.settings import PROJECT_FILES, claude_entries

    files = [args.dir / name for name in PROJECT_FILES if (args.dir / name).is_file()]
    if not files:
        raise ConfigError(
            f"{args.dir}: no {' or '.join(PROJECT_FILES)}",
            hint="name the project folder: hookgate hooks import-claude path/to/project",
        )
    entries, never = claude_entries(files)
    block: dict[str, list[Any]] = {}
    for item in entries:
        entry = json.loads(json.dumps(item.entry))  # plain values, in a readable key order
        matcher = {"matcher": entry.pop("matcher")} if "matcher" in entry else {}
        block.setdefault(item.event.aliases[0], []).append({**matcher, **entry})
    document: dict[str, Any] = {"hooks": block, **_imported_permissions(args.dir, files)}
    print(f"# from {', '.join(map(str, files))}")
    for line in never:
        print(f"# not imported: {line}")
    from ruamel.yaml import YAML  # a rare command: its writer is no start-up's cost

    yaml = YAML()
    yaml.default_flow_style = False
    yaml.dump(document, sys.stdout)
    return EXIT_OK


def _imported_permissions(project: Path, files: list[Path]) -> dict[str, Any]:
    """`permissions:` and `workspace:` for the settings `files`' permissions, if any;
    a rule that cannot be mapped is a config error, as in a session."""
    from hookgate.hooks.claude.permissions import RULE_LISTS, claude_permissions
    from hookgate.hooks.claude.settings import read_settings

    found = claude_permissions([(f, read_settings(f)) for f in files], project, Path.home())
    lists = {name: list(getattr(found, name)) for name in RULE_LISTS if getattr(found, name)}
    document: dict[str, Any] = {"permissions": lists} if lists else {}
    if found.directories:
        dirs = [os.path.relpath(folder, project.resolve()) for folder in found.directories]
        document["workspace"] = {"dirs": dirs}
    return document


def run_schema(args: argparse.Namespace) -> int:
    from hookgate.hooks.author.schema import schema_for

    if getattr(args, "tests", False):
        print(json.dumps(args.test_schema(), indent=2))
        return EXIT_OK
    if args.event is None:
        raise ConfigError("name an event, or --tests", hint="hookgate hooks schema preToolCall")
    event = _event(args.event)
    if not FORMATS[args.format].supports(event):
        raise ConfigError(f"format {args.format!r} has no counterpart of event {event.name!r}")
    document = {kind: schema_for(event.name, args.format, kind) for kind in ("payload", "reply")}
    print(json.dumps(document, indent=2))
    return EXIT_OK


def payload_from_input(
    event: EventSpec,
    given: Any,
    *,
    tool: str | None,
    agent: str | None,
    call_id: str | None = None,
) -> dict[str, Any]:
    """The event's payload from what `fire` reads: arguments, a result, a prompt or fields.

    A tool event without `call_id` gets one made from the tool and `given`: the same
    input fires with the same id, so a hook that keys on it behaves the same each run.
    """
    if event.name in ("preToolCall", "postToolCall") and not tool:
        raise ConfigError(
            f"{event.name} needs --tool NAME", hint="hookgate hooks fire preToolCall --tool shell"
        )
    if event.name in ("preToolCall", "postToolCall"):
        call_id = call_id or _stable_call_id(str(tool), given)
    if event.name == "preToolCall":
        return {"tool": tool, "call_id": call_id, "arguments": _object(given, event)}
    if event.name == "postToolCall":
        result = (
            {"content": given, "is_error": False}
            if isinstance(given, str)
            else _object(given, event)
        )
        return {"tool": tool, "call_id": call_id, "arguments": {}, "result": result}
    fields = dict(_object(given, event))
    if agent:
        fields["agent"] = agent
    return fields


def outcome_json(event: EventSpec, outcome: Outcome) -> dict[str, Any]:
    """The JSON `fire` prints: decision, the input after all changes, context, notices."""
    payload = outcome.payload
    shown: Any = payload
    if event.name == "preToolCall":
        shown = payload.get("arguments")
    elif event.name == "postToolCall":
        shown = payload.get("result")
    return {
        "event": event.name,
        "blocked": outcome.blocked,
        "reason": outcome.reason,
        "blocked_by": outcome.blocked_by,
        "input": shown,
        "changed": list(outcome.changed),
        "context": list(outcome.context),
        "notices": list(outcome.notices),
        "errors": [str(error) for error in outcome.errors],
        "hooks_run": outcome.hooks_run,
        "permission": outcome.permission,
        "permission_by": outcome.permission_by,
        "permission_reason": outcome.permission_reason,
        "stop_reason": outcome.stop_reason,
        "continue_with": outcome.continue_with,
    }


def _stable_call_id(tool: str, given: Any) -> str:
    digest = sha256(json.dumps([tool, given], sort_keys=True).encode("utf-8", "backslashreplace"))
    return f"fire_{digest.hexdigest()[:24]}"


def _event(name: str) -> EventSpec:
    spec = canonical_event(name)
    if spec is None:
        hint = did_you_mean(name, EVENT_NAMES) or "events: " + ", ".join(EVENTS)
        raise ConfigError(f"unknown event {name!r}", hint=hint)
    return spec


def _object(given: Any, event: EventSpec) -> Mapping[str, Any]:
    if not isinstance(given, dict):
        raise ConfigError(
            f"stdin must hold a JSON object for {event.name}", hint=_input_hint(event)
        )
    return given


def _input_hint(event: EventSpec) -> str:
    return {
        "preToolCall": 'the tool\'s arguments, e.g. {"command": "ls"}',
        "postToolCall": 'the tool\'s result: {"content": "...", "is_error": false} or a string',
        "preGeneration": '{"prompt": "the question"}',
    }.get(event.name, "an object of the event's fields: " + ", ".join(event.payload))


def _describe(hook: HookSpec) -> str:
    if hook.function is not None:
        what = f"python {getattr(hook.function, '__module__', '?')}:{getattr(hook.function, '__qualname__', '?')}"
    elif hook.args is not None:
        what = "args " + json.dumps(list(hook.args))
    elif hook.http is not None:
        sent = ", ".join(f"${name}" for name in hook.http.sent_variables())
        what = f"POST {hook.http.url}" + (f" (headers send {sent})" if sent else "")
    elif hook.model is not None:
        rule = f"guardrail {hook.model.rule!r}, " if hook.model.rule else ""
        what = f"{rule}checker {hook.model.checker.describe()}"
    else:
        what = f"{hook.shell} -c {json.dumps(hook.command)}"
    parts = [f"{hook.name!r}: {what}"]
    if hook.persistent:
        parts.append("persistent (one process for the session)")
    if hook.matcher is not None:
        parts.append(f"matcher {hook.matcher_shown}")
    parts.append(f"format {hook.format}, timeout {hook.timeout:g}s, onError {hook.on_error.value}")
    return "; ".join(parts) + f"  [{_shown_origin(hook.origin)}]"


def _shown_origin(origin: str) -> str:
    """`file:line` with the file relative to the working directory when it lies below it."""
    return origin.removeprefix(os.path.join(os.getcwd(), ""))
