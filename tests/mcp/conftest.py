"""Fixtures for the MCP tests: scratch projects, and the test MCP server's log and HTTP URL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime.conftest import anyio_backend, open_project_agent, project
from support.mcp_peers import http_server as run_http_server

__all__ = ["anyio_backend", "open_project_agent", "project"]


@pytest.fixture
def server_log(tmp_path: Path) -> Path:
    """The file the server's `record` tool appends to (absent until it is called)."""
    return tmp_path / "server.log"


@pytest.fixture
def http_server(server_log: Path, tmp_path: Path) -> Iterator[str]:
    """The test server over streamable HTTP on 127.0.0.1; yields its URL."""
    with run_http_server({"MCP_TEST_LOG": str(server_log)}, tmp_path / "http.pid") as url:
        yield url
