"""The documentation's examples hold: every YAML and JSON block of README.md and docs/
parses, and every `hookgate …` command they show exists (its `--help` answers)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from runtime.project import HOOKGATE

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
#: A fenced block: its language and its text.
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: A shown command: `hookgate`, its subcommand words, then the rest of its line.
_COMMAND = re.compile(
    r"(?:^|[|;&(`]\s*|\$\s+)hookgate((?:\s+[a-z][a-z-]*(?=\s|$|`))*)([^\n`|#;]*)", re.MULTILINE
)
#: Inline code in the prose.
_INLINE = re.compile(r"`([^`\n]+)`")


def blocks(language: str) -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            if match.group(1) == language:
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{doc.relative_to(ROOT)}:{line}", match.group(2)))
    return found


@pytest.mark.parametrize(("where", "text"), blocks("yaml"), ids=lambda value: value[:40])
def test_every_yaml_block_parses(where: str, text: str) -> None:
    YAML(typ="safe").load(text)


@pytest.mark.parametrize(("where", "text"), blocks("json"), ids=lambda value: value[:40])
def test_every_json_block_parses(where: str, text: str) -> None:
    json.loads(text)


def documented_commands() -> dict[tuple[str, ...], set[str]]:
    """Each `hookgate SUB …` shown (in shell blocks and inline code), as its subcommand
    words, with the long options shown with it."""
    texts = [text for _, text in blocks("sh") + blocks("")]
    for doc in DOCS:
        texts += _INLINE.findall(doc.read_text(encoding="utf-8"))
    commands: dict[tuple[str, ...], set[str]] = {}
    for text in texts:
        for match in _COMMAND.finditer(text):
            options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", match.group(2)))
            commands.setdefault(tuple(match.group(1).split()), set()).update(options)
    return commands


@pytest.mark.parametrize(
    ("words", "options"), sorted(documented_commands().items()), ids=lambda v: " ".join(v)
)
def test_every_documented_command_and_option_exists(
    words: tuple[str, ...], options: set[str]
) -> None:
    done = subprocess.run(
        [str(HOOKGATE), *words, "--help"], capture_output=True, text=True, timeout=30,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"hookgate {shlex.join(words)} --help: {done.stderr}"
    missing = [option for option in sorted(options) if option not in done.stdout]
    assert not missing, f"hookgate {shlex.join(words)} has no {', '.join(missing)}"
