"""A turn as page events: `WindowView` is the `TurnView` (and the marks view) of the window.

Every event is a JSON object with a `type`; the page draws it. An answer streams as
the whole answer so far, rendered (`answer`): markdown cannot be rendered piecewise,
and replacing one block costs the page less than patching it. Each event that carries
a piece of the answer also carries `t`, the server's clock (ms) when the piece arrived,
which the page keeps to measure how long it took to show.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from typing import Any

from hookgate.frontends.window.render import render_markdown
from hookgate.messages import ToolCall
from hookgate.tools import ToolResult
from hookgate.view import NoticeKind, ToolMark

Event = dict[str, Any]
Emit = Callable[[Event], None]


class WindowView:
    """Turns the turn's calls into events, handed to `emit` in order.

    Answer pieces that arrive together are rendered once: the rendering waits for the
    event loop's next turn (`flush` forces it), and shows every piece received by then.
    """

    def __init__(
        self,
        emit: Emit,
        block_ids: itertools.count[int],
        asked: Event | None = None,
    ) -> None:
        self._emit = emit
        self._block_ids = block_ids
        self._asked = asked
        """The turn's `question` event, in the log pages replay: its text becomes the
        marker the moment a hook blocks the question (`question_blocked`)."""
        self._block: int | None = None
        self._text: list[str] = []
        self._waiting_since: float | None = None
        """When the oldest piece not yet shown arrived (ms, the epoch), if one is waiting."""

    def answer_text(self, delta: str) -> None:
        if self._block is None:
            self._block, self._text = next(self._block_ids), []
        self._text.append(delta)
        if self._waiting_since is None:
            self._waiting_since = time.time() * 1000
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Show the pieces received so far, if any are waiting."""
        arrived, self._waiting_since = self._waiting_since, None
        if arrived is None or self._block is None:
            return
        html = render_markdown("".join(self._text))
        self._emit({"type": "answer", "block": self._block, "html": html, "t": arrived})

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        self.end_block()
        self._emit({"type": "notice", "kind": kind.value, "text": text})

    def tool_started(self, call: ToolCall) -> None:
        self.end_block()
        self._emit({"type": "tool", "id": call.id, "name": call.name,
                    "arguments": pretty(dict(call.arguments))})  # fmt: skip

    def tool_marked(self, call: ToolCall, mark: ToolMark) -> None:
        self._emit({"type": "mark", "id": call.id, "kind": mark.kind.value, "by": mark.by,
                    "reason": mark.reason})  # fmt: skip

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        self._emit({"type": "result", "id": call.id, "content": result.content,
                    "is_error": result.is_error})  # fmt: skip

    def question_blocked(self, marker: str) -> None:
        if self._asked is not None:
            self._asked["text"] = marker

    def end_block(self) -> None:
        """The answer streamed so far is done: text after this opens a new block."""
        self.flush()
        self._block = None


def pretty(arguments: dict[str, Any]) -> str:
    """A call's arguments as the page shows them: indented JSON, every character kept."""
    return json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
