"""Where hookgate keeps its state: sessions, trust, transcripts and caches.

Its own module so that a command which needs only the path (every start-up enables
the parse cache under it) does not import the session store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

#: The folder under the home that holds caches: anything in it may be deleted.
CACHE_DIR = "cache"


def default_home(env: Mapping[str, str] | None = None) -> Path:
    """`$HOOKGATE_HOME`, else `$XDG_STATE_HOME/hookgate`, else `~/.local/state/hookgate`."""
    env = os.environ if env is None else env
    if env.get("HOOKGATE_HOME"):
        return Path(env["HOOKGATE_HOME"]).expanduser()
    state = env.get("XDG_STATE_HOME", "")
    if os.path.isabs(state):  # the XDG spec says to ignore a relative one
        return Path(state) / "hookgate"
    return Path.home() / ".local" / "state" / "hookgate"


def cache_dir() -> Path | None:
    """`CACHE_DIR` under the default home; None where there is no home directory (then
    nothing is cached: every file parsed, every probe made)."""
    try:
        return default_home() / CACHE_DIR
    except RuntimeError:  # `Path.home()` without $HOME or a passwd entry
        return None
