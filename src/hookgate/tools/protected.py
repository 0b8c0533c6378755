"""Files the model's file tools never write: hookgate's own configuration and state.

`protected_refusal` is asked by `write_file` and `edit_file` before they touch a path:
the agent file's trust closure (`ToolContext.protected_files`) and everything under
`$HOOKGATE_HOME` are refused, whatever `yolo`, the allow rules or consent say.
"""

from __future__ import annotations

import os
from pathlib import Path

from hookgate.session import default_home
from hookgate.tools.base import ToolContext, ToolResult, display_path


def protected_refusal(path: Path, ctx: ToolContext) -> ToolResult | None:
    """A denied result when `path` is protected: a file of the trust closure, or under
    `$HOOKGATE_HOME` (the trust store, the sessions), once `..`, `//`, `./` and symlinks
    are resolved; else None. No allow rule, consent or `yolo` lifts it."""
    real = Path(os.path.realpath(ctx.project_dir / path))
    home = Path(os.path.realpath(default_home(ctx.env)))
    if real in ctx.protected_files or real.is_relative_to(home):
        return ToolResult(
            f"[denied: {display_path(path, ctx)} is protected: hookgate's own configuration "
            "and state, which only its owner changes (and then trusts anew)]",
            is_error=True,
        )
    return None
