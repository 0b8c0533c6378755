"""How tests reach the MCP test server (`support/mcp_server.py`): agent-file entries
for stdio, and a running streamable HTTP server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

#: The test server, run as a script: it needs nothing but the `mcp` SDK.
SERVER_SCRIPT = Path(__file__).resolve().with_name("mcp_server.py")
#: Seconds the HTTP server may take to say which port it listens on (a loaded machine
#: imports the SDK and uvicorn in about a second).
HTTP_START_S = 20.0


def stdio_server(*, pid_file: Path | None = None, **settings: Any) -> dict[str, Any]:
    """The `mcp_servers:` entry that starts the test server over stdio."""
    args = [str(SERVER_SCRIPT), "stdio"]
    if pid_file is not None:
        args += ["--pid-file", str(pid_file)]
    return {"command": sys.executable, "args": args, **settings}


@contextlib.contextmanager
def http_server(env: Mapping[str, str], pid_file: Path) -> Iterator[str]:
    """Run the test server over streamable HTTP; yields its URL; kills its group after."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "http", "--pid-file", str(pid_file)],
        stdout=subprocess.PIPE,
        env={**os.environ, **env},
        text=True,
        start_new_session=True,
    )
    try:
        line = _first_line(process, HTTP_START_S)
        if not line.startswith("PORT "):
            raise RuntimeError(f"the MCP test server said {line!r}, not its port")
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _first_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise TimeoutError(f"the MCP test server said nothing within {timeout} s")
    return process.stdout.readline()
