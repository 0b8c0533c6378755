"""The `hookgate` console script's entry point: `hookgate.cli.entry`, with the garbage
collector paused before `hookgate.cli` is imported.

`cli.entry` keeps the collector out of a command's start-up and its exit, from the
moment it is called; but its module is imported first, and that import (the hook engine,
the parsers of every command) builds tens of thousands of objects that live as long as
the process, which the collector walks again and again while they are built. From
here they are built with it paused, and `cli.entry` freezes them before it collects:
2.8 M of the 169 M instructions of a `hooks fire`. A module of its own, importing
nothing, so that `hookgate.cli` imported elsewhere leaves the collector as it was.
"""

from __future__ import annotations

import gc


def entry() -> int:
    gc.disable()
    from hookgate.cli import entry as run_program

    return run_program()
