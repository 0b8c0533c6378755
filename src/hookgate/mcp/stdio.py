"""MCP over a server's stdin and stdout, each message one line of at most `MESSAGE_CAP`.

The SDK's stdio client joins what a server writes into one string until a newline
comes: a server that writes without one (a bug, or a hostile server) fills memory,
re-joining ever longer strings as it goes. This transport speaks the same protocol
(one JSON-RPC message per line, UTF-8, parsed and written by the SDK's own types) and
starts the server as the SDK does (its default environment under the server's own, a
session of its own, stderr to ours), but reads its stdout a chunk at a time into a
bounded buffer. A line past the cap ends the connection: `on_fault` hears why before
the session does, and the server is stopped at once.

Stopping, on close: stdin closed, `STOP_GRACE` to exit, SIGTERM to its process group,
`KILL_GRACE`, SIGKILL, and SIGKILL to what is left of the group; cancelled or failed
(a start that timed out, a flood), SIGKILL at once. stdout is read and dropped
meanwhile, so that a server stuck writing can still exit.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import TextIO

import anyio
from anyio.abc import AsyncResource, ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import StdioServerParameters, types
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from hookgate.hooks.process import programs_path
from hookgate.hooks.runs import bytecode

#: Bytes a message's line may have, its end excluded; a longer one ends the connection.
MESSAGE_CAP = 16 * 1024 * 1024
#: Bytes read from the server's stdout at a time.
READ_CHUNK = 64 * 1024
#: Seconds a server has to exit once its stdin is closed; then SIGTERM to its group.
STOP_GRACE = 2.0
#: Seconds between SIGTERM and SIGKILL.
KILL_GRACE = 2.0
#: Characters of a bad line quoted in its notice.
EXCERPT = 80

logger = logging.getLogger(__name__)

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


class LineTooLong(Exception):
    """The server wrote more than `MESSAGE_CAP` bytes without a line's end."""


@asynccontextmanager
async def stdio_client(
    server: StdioServerParameters, *, errlog: TextIO, on_fault: Callable[[str], None]
) -> AsyncIterator[Streams]:
    """Start `server`, and yield the SDK's two streams to it until the block ends."""
    env = get_default_environment() | bytecode.environment()
    if "PATH" in env:  # the server's own `env:` may say otherwise
        env["PATH"] = programs_path(env["PATH"], str(server.cwd or os.getcwd()))
    process = await anyio.open_process(
        [server.command, *server.args],
        env=env | (server.env or {}),
        cwd=server.cwd,
        stderr=errlog,
        start_new_session=True,
    )
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        assert process.stdout is not None
        try:
            async with to_session:
                async for line in _lines(process.stdout):
                    await to_session.send(_parsed(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the session is gone
        except LineTooLong as exc:
            on_fault(str(exc))  # before the session ends: its calls say why
            raise  # the block is cancelled, and `_stop` kills the server at once
        # Read to the end and drop it: a server blocked writing to a full pipe would
        # not see its stdin close, nor exit.
        await _drain(process.stdout)

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for message in from_session:
                    line = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(line.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await to_session.aclose()  # the session sees the end, not a request hanging

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_stdout)
            tasks.start_soon(write_stdin)
            try:
                yield from_server, to_server
            except BaseException:  # cancelled (a start that timed out), or failed: no grace
                with anyio.CancelScope(shield=True):
                    await _stop(process, from_server, to_server, grace=False)
                raise
            else:
                with anyio.CancelScope(shield=True):
                    await _stop(process, from_server, to_server, grace=True)
            finally:
                tasks.cancel_scope.cancel()  # a survivor of the group may hold stdout open
    finally:
        if process.returncode is not None:  # else unkillable: nothing left to wait for
            with anyio.CancelScope(shield=True):
                await process.aclose()  # the pipes' transports, which would warn at exit


async def _lines(stdout: ByteReceiveStream) -> AsyncIterator[bytes]:
    """The lines `stdout` holds, their ends dropped, until it ends; raises `LineTooLong`.

    Each chunk is searched once, from where the last search ended: a long line costs its
    length, not its length squared.
    """
    pending = bytearray()
    while True:
        try:
            chunk = await stdout.receive(READ_CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            pending += chunk[start:end]
            if len(pending) > MESSAGE_CAP:
                break
            yield bytes(pending)
            pending.clear()
            start = end + 1
        else:
            pending += chunk[start:]
        if len(pending) > MESSAGE_CAP:
            raise LineTooLong(
                f"it sent more than {MESSAGE_CAP // (1024 * 1024)} MiB without a line's end: "
                "stopped"
            )


def _parsed(line: bytes) -> SessionMessage | Exception:
    """A line as the session reads it: a message, or the error a bad line is (the
    session is handed it and goes on, as with the SDK's own client); a notice says so."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        text = line[:EXCERPT].decode("utf-8", "replace") + ("…" if len(line) > EXCERPT else "")
        logger.warning("a line from the server is not a JSON-RPC message: %r", text)
        return exc


async def _stop(process: Process, *streams: AsyncResource, grace: bool) -> None:
    """Close the session's `streams` and stdin; then, with `grace`, SIGTERM and SIGKILL
    the group, each after its grace, else SIGKILL at once; and kill what is left of
    the group once the server is gone (its stdout is being drained meanwhile)."""
    assert process.stdin is not None
    for stream in (*streams, process.stdin):
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await stream.aclose()
    graced = ((STOP_GRACE, signal.SIGTERM), (KILL_GRACE, signal.SIGKILL))
    for wait, then in graced if grace else ((0.0, signal.SIGKILL),):
        if await _exited_within(process, wait):
            break
        _signal_group(process, then)
    else:
        await _exited_within(process, KILL_GRACE)  # the kernel's own time to end it
    _signal_group(process, signal.SIGKILL)  # what is left of its group, if anything


async def _exited_within(process: Process, seconds: float) -> bool:
    """Whether the server has exited, waiting up to `seconds` for it (anyio's `wait`
    hears of the exit itself, not of the pipes' end: a child may hold them open)."""
    with anyio.move_on_after(seconds):
        await process.wait()
    return process.returncode is not None


async def _drain(stdout: ByteReceiveStream) -> None:
    with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        while True:
            await stdout.receive(READ_CHUNK)


def _signal_group(process: Process, signum: int) -> None:
    """Signal the server's process group (its pid: it leads a session of its own)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)
