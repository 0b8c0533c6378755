"""Fixtures of the trust tests: the runtime tests' scratch project and loopback model."""

from __future__ import annotations

from runtime.conftest import anyio_backend, chat_server, open_project_agent, project

__all__ = ["anyio_backend", "chat_server", "open_project_agent", "project"]
