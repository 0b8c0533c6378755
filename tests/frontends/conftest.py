"""The front ends are tested on the same scratch projects as the runtime."""

from __future__ import annotations

from runtime.conftest import anyio_backend, chat_server, project

__all__ = ["anyio_backend", "chat_server", "project"]
