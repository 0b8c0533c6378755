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

from hookgate.frontends.terminal import visible, write_out

#: A line that opens or closes a fenced code block.
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
#: Spaces rich pads each line with up to the width: nothing a reader needs to copy.
_PADDING = re.compile(r" +(?=\n)")
#: Where the terminal's size cannot be read (it is gone): the usual one.
FALLBACK_SIZE = os.terminal_size((80, 24))
#: Columns a tab takes, for counting the rows plain text fills.
TAB_COLUMNS = 8


def complete_blocks(source: str) -> int:
    """How many characters at the start of `source` are whole markdown blocks."""
    end, fence, offset = 0, "", 0
    for line in source.splitlines(keepends=True):
        offset += len(line)
        if not line.endswith("\n"):
            break  # the line is still arriving
        marker = _FENCE.match(line)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence, end = "", offset  # a code block is whole at its closing fence
        elif marker:
            fence = marker.group(1)
        elif not line.strip():
            end = offset  # a blank line ends the block before it
    return end


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
        if end := complete_blocks(self._source):
            self._render(end)
        self._show_plain()

    def finish(self) -> None:
        """Render what is left; the cursor ends at the start of a line."""
        if self._source.strip():
            self._render(len(self._source))
        elif self._shown and not self._shown.endswith("\n"):
            write_out("\n", self._stream)
        self._source = self._shown = ""

    def _show_plain(self) -> None:
        # Blank lines between blocks are rich's to draw; the next block's text is not.
        text = visible(self._source.lstrip("\n")) if self._source.strip() else ""
        if len(text) > len(self._shown):
            separator = "\n" if self._blocks and not self._shown else ""
            write_out(separator + text[len(self._shown) :], self._stream)
            self._shown = text

    def _render(self, end: int) -> None:
        block, self._source = self._source[:end], self._source[end:]
        if not block.strip():
            return
        size = _size(self._stream)
        up = rows_up(self._shown, size.columns)
        if up >= size.lines - 1:  # its top has scrolled off: it stays plain
            write_out("" if self._shown.endswith("\n") else "\n", self._stream)
        else:
            erase = "\r" + (f"\033[{up}A" if up else "") + "\033[J"
            write_out(erase + render(block, size.columns), self._stream)
        self._shown = ""
        self._blocks += 1


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
