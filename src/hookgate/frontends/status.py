"""The line mode's status line: what hookgate is waiting on, and for how long.

`show("thinking")` draws `⠹ thinking… 3s` on the terminal's stderr, redrawn every
`FRAME_S`, until `clear()`; anything else written to the terminal clears it first
(`frontends.terminal.write_out` does), so it never mixes with real output. Off a
terminal it draws nothing. One status at a time: the terminal has one cursor.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
else:
    from hookgate.hooks.loop import asyncio  # imported once a turn waits

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
#: Seconds between redraws: quick enough to look alive, slow enough to cost nothing.
FRAME_S = 0.1
#: Back to the start of the line, and erase it.
ERASE_LINE = "\r\033[K"


class _Status:
    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None
        self._stream: TextIO = sys.stderr

    def show(self, what: str, stream: TextIO | None = None) -> None:
        """Show `what` with a spinner and the seconds since now, on a terminal only."""
        self.clear()
        self._stream = stream or sys.stderr
        if self._stream.isatty():
            self._task = asyncio.get_running_loop().create_task(self._draw(what))

    def clear(self) -> None:
        """Stop and erase the status, if one is shown."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        try:
            self._stream.write(ERASE_LINE)
            self._stream.flush()
        except OSError:
            pass  # the terminal is gone: nothing to erase

    async def _draw(self, what: str) -> None:
        started = time.monotonic()
        for frame in range(sys.maxsize):
            elapsed = int(time.monotonic() - started)
            try:
                self._stream.write(f"\r{FRAMES[frame % len(FRAMES)]} {what}… {elapsed}s")
                self._stream.flush()
            except OSError:
                return
            await asyncio.sleep(FRAME_S)


#: The one status line of this process's terminal.
STATUS = _Status()
