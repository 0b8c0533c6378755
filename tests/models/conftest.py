"""Fixtures for the model-layer tests: a loopback chat-completions server and anyio on asyncio."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from runtime.conftest import project
from support.chat_server import ChatServer

__all__ = ["project"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A started `ChatServer` with an empty reply queue, closed after the test."""
    with ChatServer() as server:
        yield server
