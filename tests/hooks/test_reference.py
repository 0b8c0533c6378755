"""The tables of docs/hooks.md are generated from the engine and must not drift."""

from __future__ import annotations

import runpy
from pathlib import Path

from hookgate.hooks import EVENTS

DOC = Path(__file__).resolve().parents[2] / "docs" / "hooks.md"


def test_the_reference_tables_match_the_engine() -> None:
    render = runpy.run_path(str(DOC.parents[1] / "scripts" / "gen_docs.py"))["render"]
    text = DOC.read_text()
    assert render(text) == text, "docs/hooks.md is stale: run scripts/gen_docs.py"


def test_every_event_and_alias_is_documented() -> None:
    text = DOC.read_text()
    for spec in EVENTS.values():
        for name in (spec.name, *spec.aliases):
            assert f"`{name}`" in text
