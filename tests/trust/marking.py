"""Files that leave a mark when they run: each appends `word` (`benign` as trusted, a
word of the attacker's after a change) to the file `mark`, in its own language. The
trust tests plant one where a hook really runs it, trust, change it, and read `mark`."""

from __future__ import annotations

import json
from pathlib import Path


def sh(mark: Path, word: str) -> str:
    return f"#!/bin/sh\necho {word} >> '{mark}'\n"


def py(mark: Path, word: str) -> str:
    return f"open({str(mark)!r}, 'a').write({word + chr(10)!r})\n"


def js(mark: Path, word: str) -> str:
    return f"require('fs').appendFileSync({json.dumps(str(mark))}, {json.dumps(word + chr(10))});\n"


def recipe(mark: Path, word: str, target: str = "guard") -> str:
    return f"{target}:\n\techo {word} >> '{mark}'\n"
