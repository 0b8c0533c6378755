"""grep is bounded: a backtracking line is skipped with a note, and the whole search has a limit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hookgate.tools import ToolResult, search
from hookgate.tools.search import GrepTool

RunTool = Callable[..., ToolResult]
GREP = GrepTool()
#: A line on which `(a|aa)+$` backtracks for far longer than any test would wait.
BACKTRACKING_LINE = "a" * 60 + "!"


def test_a_backtracking_line_is_skipped_and_the_others_still_match(
    run_tool: RunTool, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "MATCH_TIMEOUT", 0.05)
    (project / "a.txt").write_text(f"{BACKTRACKING_LINE}\naa\n")
    result = run_tool(GREP, {"pattern": "(a|aa)+$"})
    assert not result.is_error
    lines = result.content.splitlines()
    assert lines[0] == "a.txt:2:aa"
    assert lines[1].startswith("[skipped 1 lines: the pattern took over 0.05s on each;")


def test_the_whole_search_stops_at_its_time_limit(
    run_tool: RunTool, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "MATCH_TIMEOUT", 0.05)
    monkeypatch.setattr(search, "GREP_TIME_LIMIT", 0.2)
    (project / "a.txt").write_text(f"{BACKTRACKING_LINE}\n" * 100)
    result = run_tool(GREP, {"pattern": "(a|aa)+$"})
    assert "[stopped after 0.2s; narrow the pattern, glob or path]" in result.content
