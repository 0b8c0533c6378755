"""The stdio transport: whole lines back however the pipe cut them, a line past the cap
refused without reading on, and a line that is not a message a notice (the transport
with a real server is also tested in tests/reliability/test_faults_tools.py, and by
every test of tests/mcp)."""

from __future__ import annotations

import itertools
import logging
import sys

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookgate.mcp import stdio
from hookgate.mcp.config import StdioServer
from hookgate.mcp.connection import McpConnection
from hookgate.mcp.stdio import LineTooLong
from support.mcp_peers import SERVER_SCRIPT


class Pipe:
    """What a server wrote, handed out in the given pieces, then end of file."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces, self.reads = list(pieces), 0

    async def receive(self, max_bytes: int = 65536) -> bytes:
        self.reads += 1
        if not self.pieces:
            raise anyio.EndOfStream
        return self.pieces.pop(0)[:max_bytes]


async def read_all(pipe: Pipe) -> list[bytes]:
    return [line async for line in stdio._lines(pipe)]  # type: ignore[arg-type]


def cut(data: bytes, at: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(point % (len(data) + 1) for point in at)})
    return [data[start:end] for start, end in itertools.pairwise(points) if end > start]


@given(
    st.lists(st.binary(max_size=40).map(lambda line: line.replace(b"\n", b"")), max_size=20),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
)
def test_lines_come_back_whole_however_the_pipe_cuts_them(
    lines: list[bytes], at: list[int]
) -> None:
    data = b"".join(line + b"\n" for line in lines)
    assert anyio.run(read_all, Pipe(cut(data, at))) == lines


def test_a_line_at_the_cap_passes_and_one_byte_more_ends_the_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stdio, "MESSAGE_CAP", 10)
    assert anyio.run(read_all, Pipe([b"0123456789\n", b"ok\n"])) == [b"0123456789", b"ok"]
    with pytest.raises(LineTooLong, match="without a line's end"):
        anyio.run(read_all, Pipe([b"01234567890\n", b"never read\n"]))


def test_output_without_a_line_end_is_refused_at_the_cap_not_read_to_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stdio, "MESSAGE_CAP", 100)
    pipe = Pipe([b"x" * 30] * 1000)
    with pytest.raises(LineTooLong):
        anyio.run(read_all, pipe)
    assert pipe.reads == 4  # 120 bytes read: refused there, the other 996 pieces left


class Notices(logging.Handler):
    """The warnings the MCP transport logs, as their messages."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.mark.anyio
async def test_a_line_that_is_not_a_message_is_a_notice_and_the_server_goes_on() -> None:
    """A real server (the SDK's) writes a line of garbage before its answer: the
    session is handed the error, a notice quotes the line, and the call is answered."""
    notices = Notices()
    logging.getLogger("hookgate.mcp").addHandler(notices)
    server = StdioServer(name="test", command=sys.executable, args=(str(SERVER_SCRIPT), "stdio"))
    connection = McpConnection(server)
    try:
        await connection.start()
        result = await connection.call("garbage", {"text": "still answered"})
        assert await connection.call("echo", {"text": "and again"})
    finally:
        await connection.aclose()
        logging.getLogger("hookgate.mcp").removeHandler(notices)
    assert [block.text for block in result.content] == ["still answered"]  # type: ignore[union-attr]
    assert notices.messages == [
        "a line from the server is not a JSON-RPC message: 'this is not JSON'"
    ]
