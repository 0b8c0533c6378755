"""A real MCP server built with the `mcp` SDK, for tests: stdio or streamable HTTP.

    python -m support.mcp_server stdio [--pid-file PATH]
    python -m support.mcp_server http [--pid-file PATH]   # prints "PORT <n>" once listening

Tools: `echo(text)`, `add(a, b)`, `record(text)` (appends a line to the file named by
$MCP_TEST_LOG: proof the call reached the server), `whoami()` (its pid and
$HOOKGATE_TEST_MARK), `crash()` (the process exits mid-call without answering),
`flood()` (writes to stdout without end, and no line's end), `garbage(text)` (writes
a line that is not JSON, then returns the text) and `hang()` (never answers).
The HTTP server listens on 127.0.0.1 on an ephemeral port, path `/mcp`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

#: How long `hang` waits: longer than any test runs.
HANG_S = 3600.0

server = MCPServer("hookgate-test")


@server.tool(description="Return the text unchanged.")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Append the text to the test log.")
def record(text: str) -> str:
    with open(os.environ["MCP_TEST_LOG"], "a", encoding="utf-8") as log:
        log.write(text + "\n")
    return f"recorded: {text}"


@server.tool(description="Report this server's pid and HOOKGATE_TEST_MARK.")
def whoami() -> str:
    return f"pid={os.getpid()} mark={os.environ.get('HOOKGATE_TEST_MARK', '')}"


@server.tool(description="Exit the server process in the middle of the call.")
def crash() -> str:
    sys.stderr.flush()
    os._exit(3)


#: The server's stdout as it started: the SDK's server moves its wire elsewhere and
#: points fd 1 at stderr, so that a stray print cannot break the protocol.
WIRE = os.dup(1)


@server.tool(description="Write to the wire without end, never a line's end, never answer.")
def flood() -> str:
    chunk = b"x" * 65536
    while True:
        os.write(WIRE, chunk)


@server.tool(description="Write a line that is not JSON to the wire, then return the text.")
def garbage(text: str) -> str:
    os.write(WIRE, b"this is not JSON\n")
    return text


@server.tool(description="Never answer.")
async def hang() -> str:
    await asyncio.sleep(HANG_S)
    return "unreachable"


async def serve_http() -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue until uvicorn accepts them
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    http = uvicorn.Server(config)
    print(f"PORT {port}", flush=True)
    await http.serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--pid-file", type=Path)
    args = parser.parse_args()
    if args.pid_file:
        args.pid_file.write_text(f"{os.getpid()}\n")
    if args.transport == "stdio":
        server.run("stdio")
    else:
        asyncio.run(serve_http())


if __name__ == "__main__":
    main()
