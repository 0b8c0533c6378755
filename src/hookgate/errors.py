"""The runtime's exceptions, under the engine's root `HookgateError`."""

from __future__ import annotations

from hookgate.hooks.errors import ConfigError, HookgateError

__all__ = ["ConfigError", "HookgateError", "ModelError", "SessionError", "ToolError"]


class ModelError(HookgateError):
    """The model server failed: refused connection, HTTP error, timeout, malformed reply."""


class ToolError(HookgateError):
    """A tool could not run; its message becomes the tool's failed output."""


class SessionError(HookgateError):
    """The session file cannot be read or written."""
