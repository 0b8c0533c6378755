"""An ACP client for tests, built on the `acp` package's own client side.

`AcpPeer` starts `hookgate acp` as a subprocess in a project and talks to it over
stdio with `acp.spawn_agent_process`; `RecordingClient` is a real `acp` Client that
keeps every session update, answers permission requests from a list, and keeps every
raw message the agent sent (for the golden files).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
from acp import RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AllowedOutcome,
    CloseSessionResponse,
    DeniedOutcome,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    ToolCallUpdate,
)
from pydantic import BaseModel

#: Seconds a test waits for an update it expects.
UPDATE_WAIT_S = 20.0
#: Seconds between two looks for something a test waits for.
POLL_S = 0.02
#: The schema model of each message the agent sends, by method (requests and
#: notifications) or by the method of the request a result answers.
MODELS: Mapping[str, type[BaseModel]] = {
    "session/update": SessionNotification,
    "session/request_permission": RequestPermissionRequest,
    "initialize": InitializeResponse,
    "session/new": NewSessionResponse,
    "session/prompt": PromptResponse,
    "session/close": CloseSessionResponse,
}


class RecordingClient:
    """The editor's side: records updates; answers permission requests in order.

    An answer is an option id (`allow_once`, `reject_once`), `cancelled`, or `never`.
    """

    def __init__(self, answers: list[str] | None = None) -> None:
        self.answers = list(answers or [])
        self.updates: dict[str, list[Any]] = defaultdict(list)
        self.permissions: list[tuple[str, ToolCallUpdate, list[PermissionOption]]] = []
        self.asked = asyncio.Event()
        """Set at the first permission request."""
        self.received: list[dict[str, Any]] = []
        """Every JSON-RPC message from the agent, as sent."""

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **_: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((session_id, tool_call, options))
        self.asked.set()
        answer = self.answers.pop(0) if self.answers else "reject_once"
        if answer == "never":
            await asyncio.Event().wait()  # the user walked away; only a cancel ends this
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates[session_id].append(update)

    async def write_text_file(self, **_: Any) -> None:
        raise RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(self, **_: Any) -> None:
        raise RequestError.method_not_found("fs/read_text_file")

    def on_connect(self, conn: Any) -> None:
        pass

    def observe(self, event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            self.received.append(event.message)

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        """The text of one kind of chunk, joined: the answer, or the thoughts."""
        return "".join(u.content.text for u in self.updates[session_id] if u.session_update == kind)

    def tool_updates(self, session_id: str) -> list[Any]:
        return [
            u
            for u in self.updates[session_id]
            if u.session_update in ("tool_call", "tool_call_update")
        ]

    async def wait_for(self, session_id: str, found: Callable[[Any], bool]) -> Any:
        deadline = time.monotonic() + UPDATE_WAIT_S
        while time.monotonic() < deadline:
            for update in self.updates[session_id]:
                if found(update):
                    return update
            await asyncio.sleep(POLL_S)
        raise AssertionError(f"no such update within {UPDATE_WAIT_S} s: {self.updates}")


class AcpPeer:
    """A connection to a running `hookgate acp`, through the package's own client."""

    def __init__(self, conn: ClientSideConnection, client: RecordingClient, cwd: Path) -> None:
        self.conn = conn
        self.client = client
        self.cwd = cwd

    async def new_session(self, mcp_servers: list[Any] | None = None) -> str:
        response: NewSessionResponse = await self.conn.new_session(
            cwd=str(self.cwd), mcp_servers=mcp_servers or []
        )
        return response.session_id

    async def prompt(self, session_id: str, text: str) -> PromptResponse:
        return await self.conn.prompt(session_id=session_id, prompt=[text_block(text)])


async def wait_for_file(path: Path) -> None:
    """Wait until `path` exists (a tool in the agent process creates it)."""
    for _ in range(int(UPDATE_WAIT_S / POLL_S)):
        if await anyio.Path(path).exists():
            return
        await asyncio.sleep(POLL_S)
    raise AssertionError(f"{path} did not appear within {UPDATE_WAIT_S} s")


#: `start_peer(client=None)`: `async with` it for a running `hookgate acp` in a project.
StartPeer = Callable[..., contextlib.AbstractAsyncContextManager[AcpPeer]]


@contextlib.asynccontextmanager
async def acp_peer(
    hookgate: Path,
    cwd: Path,
    env: Mapping[str, str],
    stderr: Path,
    client: RecordingClient | None = None,
) -> AsyncIterator[AcpPeer]:
    """Start `hookgate acp` in `cwd`, initialize it, and yield a peer; stderr goes to a file."""
    client = client or RecordingClient()
    with stderr.open("wb") as errors:
        async with spawn_agent_process(
            client,
            str(hookgate),
            "acp",
            env=dict(env),
            cwd=cwd,
            transport_kwargs={"stderr": errors},
            observers=[client.observe],
        ) as (conn, _process):
            await conn.initialize(protocol_version=1)
            yield AcpPeer(conn, client, cwd)


def normalize(value: Any, replacements: Mapping[str, str]) -> Any:
    """`value` with each key of `replacements` replaced wherever it occurs in a string."""
    if isinstance(value, dict):
        return {key: normalize(item, replacements) for key, item in value.items()}
    if isinstance(value, list):
        return [normalize(item, replacements) for item in value]
    if isinstance(value, str):
        for old, new in replacements.items():
            value = value.replace(old, new)
    return value


def check_golden(
    path: Path, messages: list[dict[str, Any]], answered: Mapping[int, str], **replacements: str
) -> None:
    """Compare the agent's messages with the golden file `path`, and that with the schema.

    `answered` maps the id of each request this test sent to its method, so that a
    result is checked against the schema of what it answers. UPDATE_GOLDEN=1 rewrites.
    """
    actual = normalize(messages, {value: f"<{key}>" for key, value in replacements.items()})
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    golden = json.loads(path.read_text())
    assert actual == golden
    for message in golden:
        method = message.get("method") or answered[message["id"]]
        body = message["params"] if "method" in message else message["result"]
        parsed = MODELS[method].model_validate(body)
        dumped = parsed.model_dump(
            mode="json", by_alias=True, exclude_none=True, exclude_unset=True
        )
        assert dumped == body, method
