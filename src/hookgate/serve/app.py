"""The ASGI application of `hookgate serve`.

`POST /v1/hook` takes what a hookgate `http:` hook sends and answers its native reply;
`POST /v1/hook/claude` takes Claude Code's hook input and answers Claude Code's JSON.
Each is answered by `agents.hookrun.run_agent_hook` in a worker thread, with the
service's agent file and what the worker keeps of it (`warm.WarmAgent`: its trust
checked on every request, by a `stat` of each file while none changed; one process per
persistent hook, stopped at shut-down), the client's name in the audit record. No token, or an unknown one: 401. A body
past `MAX_BODY`: 413. An answer not ready in `time_limit`: 503, which a client's
`onError: fail` hook turns into a denial. `GET /healthz` answers without a token.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from hookgate.agents.protocol import AgentEvent, AgentProtocol, Reply
from hookgate.hooks import Outcome
from hookgate.serve.tokens import TOKEN_VARIABLE, Tokens, load_tokens
from hookgate.serve.warm import WarmAgent

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: Bytes a request body may take: an event is a few KiB; a tool result is capped by the
#: agent well below this.
MAX_BODY = 4 * 1024 * 1024
#: Seconds a request may take: a hook's own timeout is 10 minutes at most, so by then
#: something is stuck; the client gets a 503 (its `onError` decides).
TIME_LIMIT = 630.0
#: The variables `hookgate serve` hands its workers (uvicorn starts them by import).
AGENT_VARIABLE = "HOOKGATE_SERVE_AGENT"
TOKEN_FILE_VARIABLE = "HOOKGATE_SERVE_TOKEN_FILE"
TIME_LIMIT_VARIABLE = "HOOKGATE_SERVE_TIME_LIMIT"
_JSON = [(b"content-type", b"application/json")]


class HookService:
    """The service: an ASGI callable."""

    def __init__(self, agent_file: Path, tokens: Tokens, *, time_limit: float = TIME_LIMIT) -> None:
        self.agent_file = agent_file
        self.tokens = tokens
        self.time_limit = time_limit
        self._protocols: dict[str, AgentProtocol] = {}
        #: What the worker keeps between requests; its persistent hooks stop with it.
        self.warm = WarmAgent()
        # The hooks see the service's environment but its own settings and the token:
        # a hook needs neither, and the client's project directory comes with the event.
        hidden = {TOKEN_VARIABLE, AGENT_VARIABLE, TOKEN_FILE_VARIABLE, TIME_LIMIT_VARIABLE,
                  *(_protocol_of(agent).project_env for agent in set(_ROUTES.values()))}  # fmt: skip
        self._environ = {k: v for k, v in os.environ.items() if k not in hidden}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send, self.warm.close)
            return
        if scope["type"] != "http":
            return
        status, body = await self._answer(scope, receive)
        headers = [*_JSON, (b"content-length", b"%d" % len(body))]  # not chunked: one write
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _answer(self, scope: Scope, receive: Receive) -> tuple[int, bytes]:
        path, method = scope["path"], scope["method"]
        if path == "/healthz":
            return (200, b'{"status":"ok"}') if method == "GET" else _error(405, "GET only")
        agent = _ROUTES.get(path)
        if agent is None:
            return _error(404, f"no route {path}; POST /v1/hook or /v1/hook/AGENT")
        if method != "POST":
            return _error(405, "POST only")
        client = self.tokens.client_of(_header(scope, b"authorization"))
        if client is None:
            return _error(401, "a bearer token the service knows is required")
        body = await _read_body(receive)
        if body is None:
            return _error(413, f"the event passed the {MAX_BODY:,}-byte cap")
        try:
            reply = await asyncio.wait_for(
                asyncio.to_thread(self._decide, agent, body.decode("utf-8", "replace"), client),
                self.time_limit,
            )
        except TimeoutError:
            return _error(503, f"no decision within {self.time_limit:g} s")
        if reply.exit_code:
            return _error(400, reply.stderr.strip() or "the event could not be read")
        return 200, (reply.stdout or ("" if agent == "hookgate" else "{}")).encode()

    def _decide(self, agent: str, text: str, client: str) -> Reply:
        from hookgate.agents.hookrun import run_agent_hook

        protocol = self._protocols.get(agent)
        if protocol is None:
            protocol = self._protocols[agent] = _protocol_of(agent)
        return run_agent_hook(
            _ClientProtocol(protocol, client), text, agent_file=self.agent_file,
            environ=self._environ, keeper=self.warm, local=False,
        )  # fmt: skip


class _ClientProtocol:
    """An agent's protocol whose events carry the client's name into the audit."""

    def __init__(self, protocol: AgentProtocol, client: str) -> None:
        self._protocol = protocol
        self.client = client
        self.name = protocol.name
        self.project_env = protocol.project_env

    def parse(self, given: Mapping[str, Any], environ: Mapping[str, str]) -> AgentEvent | None:
        event = self._protocol.parse(given, environ)
        return None if event is None else event._replace(client=self.client)

    def reply(self, event: AgentEvent, outcome: Outcome) -> Reply:
        return self._protocol.reply(event, outcome)

    def refuse(self, event: AgentEvent, reason: str) -> Reply:
        return self._protocol.refuse(event, reason)

    def notice(self, event: AgentEvent, text: str) -> Reply:
        return self._protocol.notice(event, text)


#: Route → protocol. Codex and Gemini CLI have no http hooks: `hookgate hook codex
#: --remote URL` POSTs their events here.
_ROUTES = {"/v1/hook": "hookgate", "/v1/hook/claude": "claude", "/v1/hook/codex": "codex",
           "/v1/hook/gemini": "gemini"}  # fmt: skip


def _protocol_of(agent: str) -> AgentProtocol:
    if agent == "hookgate":
        from hookgate.serve.native import HookgateNative

        return HookgateNative()
    from hookgate.agents.cli import protocol_of

    return protocol_of(agent)


async def _read_body(receive: Receive) -> bytes | None:
    """The request body, or None past `MAX_BODY` (the rest is not read)."""
    chunks, size, more = [], 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _error(status: int, text: str) -> tuple[int, bytes]:
    return status, json.dumps({"error": text}).encode()


async def _lifespan(receive: Receive, send: Send, close: Callable[[], None]) -> None:
    """Start-up starts nothing (a persistent hook starts at its first event); shut-down
    calls `close`."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            try:
                await asyncio.to_thread(close)
            finally:
                await send({"type": "lifespan.shutdown.complete"})
            return


def create_app() -> HookService:
    """The service as `hookgate serve` configured it, for each uvicorn worker (a fresh
    interpreter: the parse cache and the orphan adoption of hookgate's start, here too)."""
    from hookgate.agents.resident import prepare
    from hookgate.store.home import default_home

    prepare(default_home())
    token_file = os.environ.get(TOKEN_FILE_VARIABLE)
    return HookService(
        Path(os.environ[AGENT_VARIABLE]),
        load_tokens(Path(token_file) if token_file else None, os.environ),
        time_limit=float(os.environ.get(TIME_LIMIT_VARIABLE, TIME_LIMIT)),
    )
