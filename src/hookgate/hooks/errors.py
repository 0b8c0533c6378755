"""The exceptions of the hook engine; `HookgateError` is the root of every hookgate error.

The runtime defines its own classes under the same root (`hookgate.errors`).
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

#: The most mistakes of one file reported together: the rest wait for the next run.
MAX_ERRORS = 20


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


class Collected:
    """Mistakes found so far in one pass over a file: `run` each independent check,
    then `raise_any` reports them all at once (up to `MAX_ERRORS`), in order."""

    def __init__(self) -> None:
        self.errors: list[ConfigError] = []

    def run(self, check: Callable[[], T]) -> T | None:
        """`check()`, or None with its mistakes kept."""
        try:
            return check()
        except ConfigErrors as many:
            self.errors.extend(many.errors)
        except ConfigError as one:
            self.errors.append(one)
        return None

    def raise_any(self) -> None:
        """Raise what was found: the one error as it is, several as `ConfigErrors`."""
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            kept = self.errors[:MAX_ERRORS]
            if len(self.errors) > MAX_ERRORS:
                left = len(self.errors) - MAX_ERRORS
                kept.append(ConfigError(f"... and {left} more, shown once these are fixed"))
            raise ConfigErrors(kept)
