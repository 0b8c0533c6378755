"""One MCP server connection, held open by a task of its own until the session closes.

The SDK's client enters task groups that must be left by the task that entered them,
while a session is opened, used and closed by different tasks (an ACP request opens
it, another runs the turn). So each connection has an owner task that enters the
client, lists the tools, and waits for `aclose`; calls from any task go through it.
Every wait is bounded by the server's `timeout`; a crash ends the calls at once.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TextIO

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT, CallToolResult, Implementation
from mcp.types import Tool as RemoteTool

from hookgate.hooks import HookgateError
from hookgate.hooks.process import guarded
from hookgate.mcp.config import HttpServer, McpServerConfig, StdioServer
from hookgate.mcp.stdio import LineTooLong, stdio_client

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookgate.tools.sandbox.boundaries import Boundaries

#: Seconds `aclose` waits for the owner task to leave the client (stdin closed, then
#: the stdio transport's SIGTERM/SIGKILL escalation of about 4 s) before cancelling it.
CLOSE_WAIT = 10.0
#: Seconds added to a call's timeout for our own bound, so that the SDK's (which also
#: tells the server the request is cancelled) fires first.
TIMEOUT_SLACK = 1.0
#: Seconds an HTTP server's event stream may stay silent: its standalone stream idles
#: between server messages (the SDK's default). Calls are bounded by `timeout` anyway.
SSE_READ_TIMEOUT = 300.0
#: Pages of `tools/list` read at most: a server that pages forever cannot hang a start.
MAX_TOOL_PAGES = 100
CLIENT_INFO = Implementation(name="hookgate", version="0.1.0")
CLOSED = "it closed the connection (it exited or crashed)"


class McpServerError(HookgateError):
    """An MCP server could not be reached, failed, or did not answer in time."""


class McpConnection:
    """A connection to the server `config` names, from `start` to `aclose`."""

    def __init__(
        self,
        config: McpServerConfig,
        *,
        project_dir: str | None = None,
        confine: Callable[[list[str]], list[str]] | None = None,
        boundaries: Boundaries | None = None,
    ) -> None:
        """`confine`: the session's sandbox, as the command line that runs an argv in it,
        for a stdio server with `sandbox: true` (which refuses to start without one),
        within `boundaries`."""
        self.config = config
        self.name = config.name
        self._project_dir = project_dir
        self._confine = confine
        #: Where the server runs confined: what it makes that programs outside the
        #: sandbox run is set aside after each call (None: it runs as it is).
        self.boundaries = boundaries if isinstance(config, StdioServer) and config.sandbox else None
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None
        self._ended: str | None = None
        self._fault: str | None = None  # why the transport cut the connection, if it did

    async def start(self) -> list[RemoteTool]:
        """Start or reach the server and list its tools; raises `McpServerError`.

        A failed start leaves nothing running.
        """
        ready: asyncio.Future[list[RemoteTool]] = asyncio.get_running_loop().create_future()
        # A failure that lands after `start` gave up must not be logged as never retrieved.
        ready.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._owner = asyncio.create_task(self._hold(ready), name=f"mcp server {self.name}")
        try:
            async with asyncio.timeout(self.config.start_timeout):
                return await asyncio.shield(ready)
        except TimeoutError:
            self._owner.cancel()  # a server that hangs on start gets no grace
            await self.aclose()
            raise McpServerError(f"no answer within {self.config.start_timeout:g} s") from None
        except BaseException:
            await self.aclose()
            raise

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> CallToolResult:
        """Call `tool` on the server; raises `McpServerError` when no result comes."""
        client = self._client
        if client is None:
            raise McpServerError(f"the server is not running ({self._ended or 'closed'})")
        timeout = self.config.timeout
        try:
            async with asyncio.timeout(timeout + TIMEOUT_SLACK):
                return await client.call_tool(tool, dict(arguments), read_timeout_seconds=timeout)
        except TimeoutError:
            raise McpServerError(f"no answer within {timeout:g} s") from None
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise McpServerError(f"no answer within {timeout:g} s") from exc
            if exc.code == CONNECTION_CLOSED:
                raise McpServerError(self._fault or CLOSED) from exc
            ended = f" ({self._ended})" if self._ended else ""
            raise McpServerError(f"{exc}{ended}") from exc

    async def aclose(self) -> None:
        """Stop the server (stdio) or end the HTTP session; bounded by `CLOSE_WAIT`."""
        self._stop.set()
        owner = self._owner
        if owner is None or owner.done():
            return
        try:
            _, pending = await asyncio.wait({owner}, timeout=CLOSE_WAIT)
            if pending:
                owner.cancel()
                await asyncio.wait({owner})
        except asyncio.CancelledError:
            owner.cancel()
            raise

    async def _hold(self, ready: asyncio.Future[list[RemoteTool]]) -> None:
        """The owner task: enter the client, publish its tools, wait for `aclose`."""
        try:
            async with Client(
                self._transport(),
                # The handshake and the tool list; each call passes its own `timeout`.
                read_timeout_seconds=self.config.start_timeout,
                client_info=CLIENT_INFO,
            ) as client:
                tools = await _list_tools(client)
                self._client = client
                ready.set_result(tools)
                await self._stop.wait()
        except Exception as exc:
            # Reported to `start`, or to the calls that follow; never lost in the task.
            self._ended = f"it stopped: {describe_error(exc)}"
            if not ready.done():
                ready.set_exception(McpServerError(describe_error(exc)))
        finally:
            self._client = None
            if not ready.done():  # closed while starting: `start` must not read a cancel
                ready.set_exception(McpServerError("closed before it started"))

    def _on_fault(self, reason: str) -> None:
        self._fault = reason

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        config = self.config
        if isinstance(config, StdioServer):
            cwd = config.cwd if config.cwd is not None else self._project_dir
            # Marked for the guardian: the server dies with hookgate, even by SIGKILL.
            env = guarded(config.env)
            argv = [config.command, *config.args]
            if config.sandbox:
                if self._confine is None:
                    raise McpServerError("it asks for the sandbox, and this session has none")
                argv = self._confine(argv)
            parameters = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
            return stdio_client(parameters, errlog=_errlog(), on_fault=self._on_fault)
        return _http_transport(config)


@asynccontextmanager
async def _http_transport(config: HttpServer) -> AsyncIterator[Any]:
    """Streamable HTTP with `config`'s headers, closing the HTTP client it opens."""
    timeout = httpx2.Timeout(config.timeout, read=max(config.timeout, SSE_READ_TIMEOUT))
    async with (
        httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout) as http,
        streamable_http_client(config.url, http_client=http) as streams,
    ):
        yield streams


async def _list_tools(client: Client) -> list[RemoteTool]:
    tools: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def describe_error(exc: BaseException) -> str:
    """One line for a failure of the SDK or the transport; groups show their first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return CLOSED
    if isinstance(exc, McpServerError | MCPError | LineTooLong):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if not isinstance(exc, OSError) else text


def _errlog() -> TextIO:
    """Where a stdio server's stderr goes: ours, which never carries the product's output."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__ or sys.stderr
    return sys.stderr


class _OneLine(logging.Formatter):
    """The SDK's diagnostics as one line each: a user's broken server is no traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = str(record.exc_info[1]).strip().splitlines()
            text = f"{text}: {error[0] if error else type(record.exc_info[1]).__name__}"
        return f"hookgate: MCP: {text}"


def show_sdk_logs_as_notices() -> None:
    """Route the `mcp` SDK's warnings and errors, and our transport's, to stderr, one line
    each (idempotent)."""
    for name in ("mcp", "hookgate.mcp"):
        logger = logging.getLogger(name)
        if any(isinstance(handler.formatter, _OneLine) for handler in logger.handlers):
            continue
        handler = logging.StreamHandler(_errlog())
        handler.setFormatter(_OneLine())
        handler.setLevel(logging.WARNING)
        logger.addHandler(handler)
        logger.propagate = False
