"""The exceptions of the hook engine; `HookgateError` is the root of every hookgate error.

The runtime defines its own classes under the same root (`hookgate.errors`).
"""

from __future__ import annotations


class HookgateError(Exception):
    """Root of every error hookgate raises on purpose."""


class ConfigError(HookgateError):
    """A configuration file is wrong: the message names file, line, key path and value."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text}\n  hint: {self.hint}" if self.hint else text


class ConfigErrors(ConfigError):
    """Several configuration mistakes found in one pass, reported together."""

    def __init__(self, errors: list[ConfigError]) -> None:
        super().__init__("\n".join(str(error) for error in errors))
        self.errors = errors

    def __str__(self) -> str:
        return "\n".join(str(error) for error in self.errors)
