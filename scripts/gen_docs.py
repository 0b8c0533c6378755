"""Regenerate the tables of docs/hooks.md that come from code (see hookgate.hooks.author.reference)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hookgate.hooks.author.reference import GENERATED

DOC = Path(__file__).resolve().parent.parent / "docs" / "hooks.md"


def render(text: str) -> str:
    for name, make in GENERATED.items():
        pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(\n<!-- {name}:end -->)", re.DOTALL)
        text, count = pattern.subn(lambda m, make=make: m.group(1) + make() + m.group(2), text)
        if count != 1:
            sys.exit(f"{DOC}: marker for {name!r} not found exactly once")
    return text


if __name__ == "__main__":
    DOC.write_text(render(DOC.read_text()))
