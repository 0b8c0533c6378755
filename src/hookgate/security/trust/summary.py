"""What trusting an agent file means, in plain words, for `hookgate trust` to show.

Each hook with its event and command, and what else decides what it runs (a `shell:`
program, its `env:`, a word trust cannot pin); each MCP server with its `env:`; the
model server and which variable is sent there as the API key; what widens the
model's reach (`reach`); the asked agents; the files whose digests are recorded.
Nothing here runs or imports anything the file names.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path

from hookgate.config.agentfile import AgentConfig
from hookgate.hooks import HookSpec
from hookgate.hooks.config import DEFAULT_SHELL
from hookgate.hooks.kinds.model.apikey import where_the_key_goes
from hookgate.hooks.runs.environments import environments
from hookgate.hooks.runs.shadows import SHADOWS
from hookgate.hooks.runs.whatruns import (
    HookRuns,
    loads_code,
    what_hook_runs,
    what_server_runs,
)
from hookgate.mcp.config import HttpServer
from hookgate.models import BASE_URL_ENV, DEFAULT_BASE_URL, SCRIPTED_PREFIX
from hookgate.security.trust.closure import Closure
from hookgate.security.trust.reach import widened_reach
from hookgate.view import visible


def shown(text: str) -> str:
    """`text` as one harmless line: every control character a sign, a newline ␊.

    The file is not trusted yet: an escape sequence in a name (`ESC [2K` erases the
    line it is on, OSC 52 writes the clipboard) or a newline in it could make the
    summary show a harmless hook in place of the one that would run.
    """
    return visible(text).replace("\n", "\u240a")


def describe_closure(closure: Closure) -> str:
    """The summary shown before the y/N question, one item a line, each `shown`."""
    lines: list[str] = []
    for config in closure.agents:
        lines.extend(_describe_agent(config, top=config is closure.root))
    lines.append("Files checked at every start (a change to any of them needs trusting again):")
    lines.extend(_file_lines(closure))
    if folders := sorted(environments(closure.files, closure.root.base_dir)):
        lines.append("Read-only to the model, as hooks run from them (not pinned: your package "
                     "manager changes them):")  # fmt: skip
        lines.extend(f"  {folder}{os.sep}" for folder in folders)
    return "\n".join(shown(line) for line in lines)


def _file_lines(closure: Closure) -> Iterator[str]:
    """A line a file of the closure; the ones trusted as absent, a line a role and
    folder (a module that may appear beside a script comes in six forms: `json.py`,
    `json.pyc`, ...), where the first of them stood."""
    rows: dict[tuple[str, Path, bool], list[str]] = {}  # role, path or folder, present
    for path, role in closure.files.items():
        if path.name == SHADOWS:
            yield f"  {role}: in {path.parent}{os.sep}, no module that would shadow Python's"
            continue
        present = path.exists()
        rows.setdefault((role, path if present else path.parent, present), []).append(path.name)
    for (role, path, present), names in rows.items():
        if present:
            folder = os.sep if path.is_dir() else ""  # its files, and which files there are
            yield f"  {role}: {path}{folder}"
        elif len(names) == 1:
            yield f"  {role}: {path / names[0]} (absent: must stay so)"
        else:
            yield f"  {role}: in {path}{os.sep}, absent, must stay so: {', '.join(names)}"


def _describe_agent(config: AgentConfig, *, top: bool) -> Iterator[str]:
    yield f"{'Agent file' if top else 'Asked agent'} {config.path}:"
    yield f"  model: {_model(config)}"
    yield from _telemetry(config)
    hooks = list(config.hooks)
    yield "  hooks it runs:" if hooks else "  hooks it runs: none"
    for hook in hooks:
        matcher = f" [matching {hook.matcher.pattern!r}]" if hook.matcher else ""
        yield f"    {hook.event.name}{matcher}: {_hook_command(hook)}"
        if hook.shell != DEFAULT_SHELL and hook.command is not None:
            yield f"      run by the shell {hook.shell}"
        yield from _runs(what_hook_runs(hook, config.base_dir), hook.env)
    servers = list(config.mcp_servers.values())
    yield "  MCP servers it starts:" if servers else "  MCP servers it starts: none"
    for server in servers:
        if isinstance(server, HttpServer):
            yield f"    {server.name}: connects to {server.url}"
            continue
        words = [server.command, *server.args]
        yield f"    {server.name}: {shlex.join(words)}"
        cwd = server.cwd or config.base_dir
        yield from _runs(what_server_runs(words, server.env, cwd, config.base_dir), server.env)
    for ref in config.agents.values():
        yield f"  may ask agent {ref.name!r}: {ref.file} (trusted with it)"
    reach = list(widened_reach(config))
    if reach:
        yield "  what it lets the model do without asking you:"
        yield from (f"    {line}" for line in reach)


def _telemetry(config: AgentConfig) -> Iterator[str]:
    """Where `telemetry:` sends what: the agent file's collector, the text it lets go."""
    telemetry = config.telemetry
    if telemetry is None or (telemetry.otlp is None and not telemetry.content):
        return
    if telemetry.otlp is not None:
        where = f"{telemetry.otlp} (telemetry.otlp; no header or credential of your environment's)"
    else:
        where = "the collector your OTEL_EXPORTER_OTLP_* variables name, if any"
    yield (f"  telemetry: every event's decision (event and hook names, outcomes, times) goes "
           f"to {where}")  # fmt: skip
    if telemetry.content:
        yield ("    with the text of your questions, the tool calls' arguments and results, and "
               "the hooks' reasons (telemetry.content: true)")  # fmt: skip


def _runs(runs: HookRuns, env: Mapping[str, str]) -> Iterator[str]:
    """The lines under a hook or server: its environment, then what trust cannot pin."""
    for key, value in env.items():
        if loads_code(key):
            yield f"      env {key}={value} — warning: {key} makes programs load code from it"
        else:
            yield f"      env {key}={value}"
    for word in runs.unread:
        yield f"      not pinned: {word} (read at run time: trust cannot tell which file it runs)"


def _hook_command(hook: HookSpec) -> str:
    if hook.python is not None:
        return f"python: {hook.python}"
    if hook.http is not None:
        # A URL is not a file to pin, but where the events go, and with which of your
        # variables, is what trusting it means.
        sent = ", ".join(f"${name}" for name in hook.http.sent_variables())
        sending = f", its headers sending the value of {sent}" if sent else ""
        return f"POSTs each event to {hook.http.url}{sending}"
    if hook.model is not None:
        checker = hook.model.checker
        if checker.script is not None:
            return f"asks a scripted checker (offline) playing {checker.script}"
        return (f"sends each event to the checker model {checker.name} at {checker.base_url}; "
                + where_the_key_goes(checker.base_url, checker.api_key_env))  # fmt: skip
    argv = hook.argv()
    if len(argv) == 3 and argv[1] == "-c":
        return argv[2]
    return shlex.join(argv)


def _model(config: AgentConfig) -> str:
    spec = config.model
    if spec is None:
        return "none: hooks alone, run inside another agent by `hookgate hook`"
    if isinstance(spec, str) and spec.startswith(SCRIPTED_PREFIX):
        return f"a scripted model (offline) playing {spec.removeprefix(SCRIPTED_PREFIX).strip()}"
    settings = {"name": spec} if isinstance(spec, str) else dict(spec)
    url = settings.get("base_url")
    if url is None:
        return (f"{settings['name']} at ${BASE_URL_ENV}, else {DEFAULT_BASE_URL}; your "
                "conversations go there; no API key is sent (api_key_env names none), but "
                "$OPENAI_API_KEY where that URL is https://api.openai.com")  # fmt: skip
    key = settings.get("api_key_env")
    return f"{settings['name']} at {url}; your conversations go there; " + where_the_key_goes(
        str(url), None if key is None else str(key)
    )
