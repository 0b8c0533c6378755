"""The linter's syntax checks: which commands it hands to a shell, and what comes back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import parse_hooks
from hookgate.hooks.author import lint
from hookgate.hooks.config import HookSpec
from hookgate.hooks.files.yamlfile import Where


def hook(tmp_path: Path, command: str) -> HookSpec:
    config = parse_hooks(
        {"preToolCall": [{"command": command}]}, Where("t.yaml"), base_dir=tmp_path
    )
    return next(iter(config))


@pytest.mark.parametrize("command", ["true", "exit 0", "printf %s ok", "a=b env LC_ALL=C true"])
def test_plain_words_are_not_sent_to_a_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """A command of plain words parses in every shell: checking it would start a process
    (and, the first time, the guardian) at every session's start, for nothing."""

    def no_process(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"started a process to check {command!r}")

    monkeypatch.setattr(lint, "run_process_sync", no_process)
    assert lint.lint_hook(hook(tmp_path, command), tmp_path) == []


@pytest.mark.parametrize(
    "command", ["if", "true; fi", "done", "echo 'unclosed", "{ true", "true &&", "case x"]
)
def test_a_command_with_syntax_is_still_parsed_by_the_shell(tmp_path: Path, command: str) -> None:
    """A reserved word, a quote, an operator or a brace is the shell's to judge."""
    warnings = lint.lint_hook(hook(tmp_path, command), tmp_path)
    assert warnings[0].startswith("/bin/sh cannot parse the command"), warnings
