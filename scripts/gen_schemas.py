#!/usr/bin/env python3
"""Write `all_schemas()` to src/hookgate/hooks/schemas/, the copies the package ships.

Run after changing the event table or a format: `.venv/bin/python scripts/gen_schemas.py`.
Files no longer generated are removed; tests/hooks/test_golden.py fails while the
shipped copies differ from the generated ones.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hookgate.hooks.author.schema import all_schemas

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "src" / "hookgate" / "hooks" / "schemas"


def render(schema: dict[str, object]) -> str:
    """A schema as its shipped file holds it."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    SCHEMA_DIR.mkdir(parents=True, exist_ok=True)
    schemas = all_schemas()
    for stale in sorted(SCHEMA_DIR.glob("*.json")):
        if stale.name not in schemas:
            stale.unlink()
            print(f"removed {stale.name}", file=sys.stderr)
    for name, schema in schemas.items():
        (SCHEMA_DIR / name).write_text(render(schema), encoding="utf-8")
    print(f"wrote {len(schemas)} schemas to {SCHEMA_DIR}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
