"""`hookgate acp` driven by hand over its pipes, and lines that are not JSON-RPC messages.

`RawAgent` writes the protocol as bytes and keeps stdout whole, so a stray byte or a
missing reply is seen (the SDK's client skips what it cannot parse).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any

from runtime.project import HOOKGATE, RUN_TIMEOUT, Project


class RawAgent:
    """`hookgate acp` with its stdin and stdout as JSON lines; stdout kept whole."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[bytes] = []
        self._ids = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request; read stdout until its response, which is returned."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._ids += 1
        message = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), RUN_TIMEOUT)
            assert line, "hookgate acp closed stdout"
            self.lines.append(line)
            received = json.loads(line)
            if received.get("id") == self._ids and "method" not in received:
                return received

    async def refused(self, line: bytes) -> dict[str, Any]:
        """Write one raw line; the reply it gets, which must be an error."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()
        reply = await asyncio.wait_for(self.process.stdout.readline(), RUN_TIMEOUT)
        assert reply, f"hookgate acp closed stdout after {line!r}"
        received: dict[str, Any] = json.loads(reply)
        assert "error" in received, received
        return received

    async def finish(self) -> tuple[bytes, bytes]:
        """Close stdin (the editor leaves); the rest of stdout, and all of stderr."""
        assert self.process.stdin is not None
        self.process.stdin.close()  # communicate() without input leaves stdin open
        rest, errors = await asyncio.wait_for(self.process.communicate(), RUN_TIMEOUT)
        self.lines += rest.splitlines(keepends=True)
        return rest, errors


async def start_raw(project: Project, env: Mapping[str, str] | None = None) -> RawAgent:
    """`hookgate acp` in `project`, in its environment or `env`, its agent file trusted."""
    project.trust(env=env)
    process = await asyncio.create_subprocess_exec(
        str(HOOKGATE),
        "acp",
        cwd=project.dir,
        env=dict(env or project.env()),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    return RawAgent(process)


#: Seconds between two looks for what a test waits for.
POLL_S = 0.02


async def wait_until(found: Callable[[], bool]) -> None:
    """Wait until `found()` holds (a process of the agent makes it so)."""
    for _ in range(int(RUN_TIMEOUT / POLL_S)):
        if found():
            return
        await asyncio.sleep(POLL_S)
    raise AssertionError(f"{found} did not hold within {RUN_TIMEOUT} s")


#: Lines that are not one JSON-RPC message, the error code each gets, and the id it names.
NOT_MESSAGES = [
    (b"not json", -32700, None),
    (b"\xff\xfe{}", -32700, None),
    (b"[]", -32600, None),
    (b"42", -32600, None),
    (b'"x"', -32600, None),
    (b"null", -32600, None),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}]', -32600, None),
    (b'{"jsonrpc": "2.0", "id": 7}', -32600, 7),
    (b'{"jsonrpc": "2.0", "id": 8, "method": 5}', -32600, 8),
    (b'{"jsonrpc": "2.0", "id": [1], "method": "initialize"}', -32600, None),
]
