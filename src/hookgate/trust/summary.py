"""What trusting an agent file means, in plain words, for `hookgate trust` to show.

Each hook with its event and command (an http hook: its URL and the variables its
headers send), each MCP server, the model server and which environment variable is
sent to it as the API key, the asked agents, and the files whose digests are recorded.
Nothing here runs or imports anything the file names.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from hookgate.agentfile import AgentConfig
from hookgate.frontends.terminal import visible
from hookgate.hooks import HookSpec
from hookgate.mcp.config import HttpServer
from hookgate.models import BASE_URL_ENV, DEFAULT_BASE_URL, SCRIPTED_PREFIX
from hookgate.trust.closure import Closure

#: The variable sent as the API key when a model mapping names none.
_DEFAULT_KEY_ENV = "OPENAI_API_KEY"


def describe_closure(closure: Closure) -> str:
    """The summary shown before the y/N question, one item a line.

    Every line is made `visible`, and a newline inside one shown as ␊: the file is not
    trusted yet, and an escape sequence in a command (`ESC [2K` erases the line it is on)
    or a newline in it could make the summary show a harmless hook in place of the one
    that would run.
    """
    lines: list[str] = []
    for config in closure.agents:
        lines.extend(_describe_agent(config, top=config is closure.root))
    lines.append("Files checked at every start (a change to any of them needs trusting again):")
    for path, role in closure.files.items():
        absent = "" if path.exists() else " (absent: must stay so)"
        lines.append(f"  {role}: {path}{absent}")
    return "\n".join(visible(line).replace("\n", "\u240a") for line in lines)


def _describe_agent(config: AgentConfig, *, top: bool) -> Iterator[str]:
    yield f"{'Agent file' if top else 'Asked agent'} {config.path}:"
    yield f"  model: {_model(config)}"
    hooks = list(config.hooks)
    yield "  hooks it runs:" if hooks else "  hooks it runs: none"
    for hook in hooks:
        matcher = f" [matching {hook.matcher.pattern!r}]" if hook.matcher else ""
        yield f"    {hook.event.name}{matcher}: {_hook_command(hook)}"
    servers = list(config.mcp_servers.values())
    yield "  MCP servers it starts:" if servers else "  MCP servers it starts: none"
    for server in servers:
        if isinstance(server, HttpServer):
            yield f"    {server.name}: connects to {server.url}"
        else:
            yield f"    {server.name}: {shlex.join([server.command, *server.args])}"
    for ref in config.agents.values():
        yield f"  may ask agent {ref.name!r}: {ref.file} (trusted with it)"
    if config.yolo:
        yield "  yolo: true — tool calls run without asking you"


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
        return (f"sends each event to the checker model {checker.name} at {checker.base_url}, "
                f"with the value of ${checker.api_key_env} as the API key")  # fmt: skip
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
    url = settings.get("base_url") or f"${BASE_URL_ENV}, else {DEFAULT_BASE_URL}"
    key = settings.get("api_key_env", _DEFAULT_KEY_ENV)
    return (
        f"{settings['name']} at {url}; your conversations go there, "
        f"with the value of ${key} sent as the API key"
    )
