"""The reliability suite's two profiles: quick (CI, the default) and full.

`scripts/reliability --full` (or HOOKGATE_RELIABILITY=full) runs every case at its
full size; the quick profile runs the same cases smaller, so CI proves each one.
"""

from __future__ import annotations

import os
from pathlib import Path

FULL = os.environ.get("HOOKGATE_RELIABILITY") == "full"

#: Where the suite leaves what docs/reliability.md is rendered from: every case's record
#: (cases.json, written by conftest.py) and the figures of cases that measure (load.json).
OUT = Path(os.environ.get("HOOKGATE_RELIABILITY_OUT", "build/reliability"))

#: The categories of docs/reliability.md, in its order; each test is marked with one:
#: `@pytest.mark.reliability("hooks")`.
CATEGORIES = ("hooks", "model", "tools", "signals", "session", "fuzzing", "secrets", "load")


def scale(quick: int, full: int) -> int:
    """`full` in the full profile, `quick` otherwise."""
    return full if FULL else quick
