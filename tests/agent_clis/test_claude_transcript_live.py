"""The recorded Claude Code transcript still matches what the installed CLI writes.

`tests/runtime/claude_transcript.jsonl` is what hookgate's transcript is checked
against; this records a fresh one with the real CLI (a few seconds) and compares the
shape of each line: its keys in order, its message's and its content blocks'.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_clis.conftest import AGENT_CLIS
from agent_clis.record_transcript import record

RECORDED = Path(__file__).parents[1] / "runtime" / "claude_transcript.jsonl"

pytestmark = pytest.mark.skipif(
    not (AGENT_CLIS / "claude").exists(),
    reason="Claude Code is not installed: run scripts/install-agent-clis",
)


def shape(text: str) -> list[Any]:
    line = json.loads(text)
    message = line["message"]
    content = message["content"]
    blocks = [list(block) for block in content] if isinstance(content, list) else content
    return [list(line), list(message), blocks if isinstance(blocks, list) else "text"]


def test_the_installed_claude_code_writes_the_recorded_shape(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.jsonl"

    record(fresh)

    mine = [shape(text) for text in RECORDED.read_text(encoding="utf-8").splitlines()]
    theirs = [shape(text) for text in fresh.read_text(encoding="utf-8").splitlines()]
    assert theirs == mine
