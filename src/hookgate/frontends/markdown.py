"""Line mode's answer as rendered markdown, block by block, while it streams.

Each piece of the answer shows at once as plain text; when a block is complete (a
blank line outside a code fence, or a closing fence) its plain text is erased and the
block is drawn again by `rich`, bold, lists and highlighted code. A block taller than
the screen cannot be erased (its top has scrolled away) and stays plain. Everything is
made `visible` before rich sees it, and rich writes no link escapes (OSC 8): the model
must not be able to drive the terminal through markdown either.
"""

from __future__ import annotations

import io
import os
import re
from typing import TextIO

from rich.cells import cell_len
from rich.console import Console
from rich.markdown import Markdown

from hookgate.frontends.terminal import write_out
from hookgate.view import visible

#: A line that opens or closes a fenced code block.
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
#: Spaces rich pads each line with up to the width: nothing a reader needs to copy.
_PADDING = re.compile(r" +(?=\n)")
#: Where the terminal's size cannot be read (it is gone): the usual one.
FALLBACK_SIZE = os.terminal_size((80, 24))
#: Columns a tab takes, for counting the rows plain text fills.
TAB_COLUMNS = 8


def first_block(source: str) -> int:
    """The length of the first whole markdown block of `source`; 0 if none is whole yet."""
    fence, offset, content = "", 0, False
    for line in source.splitlines(keepends=True):
        offset += len(line)
        if not line.endswith("\n"):
            break  # the line is still arriving
        marker = _FENCE.match(line)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                return offset  # a code block is whole at its closing fence
        elif marker:
            fence = marker.group(1)
        elif line.strip():
            content = True
        elif content:
            return offset  # a blank line ends the block before it
    return 0


def rows_up(text: str, columns: int) -> int:
    """How many rows above the cursor `text` starts, once written from column 0."""
    *lines, last = text.expandtabs(TAB_COLUMNS).split("\n")
    rows = sum(max(1, -(-cell_len(line) // columns)) for line in lines)
    # A line that fills its last row exactly leaves the cursor on that row, not below.
    return rows + max(0, -(-cell_len(last) // columns) - 1)


class MarkdownAnswer:
    """Streams one answer to `stream` (a colour terminal), each block rendered when whole."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._source = ""  # the answer past the last rendered block
        self._shown = ""  # the part of it on the screen as plain text
        self._blocks = 0

    def add(self, delta: str) -> None:
        self._source += delta
        while end := first_block(self._source):
            self._render(end)  # one at a time: rich spaces blocks unlike a stream would
        self._show_plain()

    def finish(self) -> None:
        """Render what is left; the cursor ends at the start of a line."""
        if self._source.strip():
            self._render(len(self._source))
        elif self._shown and not self._shown.endswith("\n"):
            write_out("\n", self._stream)
        self._source = self._shown = ""
        self._blocks = 0  # what comes next follows a notice, not a block

    def _show_plain(self) -> None:
        # Blank lines between blocks are rich's to draw; the next block's text is not.
        text = visible(self._source.lstrip("\n")) if self._source.strip() else ""
        if not text.startswith(self._shown):  # a \r then \n: shown as ␍, now a newline
            write_out(self._erase(_size(self._stream)), self._stream)
            self._shown = ""
        if len(text) > len(self._shown):
            write_out(self._separator() + text[len(self._shown) :], self._stream)
            self._shown = text

    def _render(self, end: int) -> None:
        block, self._source = self._source[:end], self._source[end:]
        if not block.strip():
            return
        size = _size(self._stream)
        if rows_up(self._shown, size.columns) >= size.lines - 1:  # its top scrolled off
            whole = visible(block.lstrip("\n")).rstrip("\n") + "\n"
            write_out(whole[len(self._shown) :], self._stream)  # the rest of it, plain
        else:
            start = self._erase(size) if self._shown else self._separator()
            write_out(start + render(block, size.columns), self._stream)
        self._shown = ""
        self._blocks += 1

    def _separator(self) -> str:
        """The blank line before a block that follows another; its first text follows it."""
        return "\n" if self._blocks and not self._shown else ""

    def _erase(self, size: os.terminal_size) -> str:
        """What moves the cursor back to where the plain text began and erases it."""
        up = rows_up(self._shown, size.columns)
        return "\r" + (f"\033[{up}A" if up else "") + "\033[J"


def render(markdown: str, columns: int) -> str:
    """`markdown` as the terminal shows it, in colour, ending with a newline."""
    buffer = io.StringIO()
    console = Console(
        file=buffer, force_terminal=True, width=columns, color_system="256", highlight=False
    )
    console.print(Markdown(visible(markdown), hyperlinks=False))
    return _PADDING.sub("", buffer.getvalue()).lstrip("\n")


def _size(stream: TextIO) -> os.terminal_size:
    try:
        return os.get_terminal_size(stream.fileno())
    except (OSError, ValueError):
        return FALLBACK_SIZE
