"""A small OpenAI Responses API on loopback, for the real Codex CLI: it plays a script
of model turns (function calls, then a final answer), streamed as server-sent events,
and keeps every request it was sent.

The turn it plays is the number of function calls already answered in the request's
input; a call names the tool the way the request's `tools` offer it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from agent_clis.scripted import ScriptedServer, Turn, send_events


class MockResponses(ScriptedServer):
    """The Responses API (`POST /v1/responses`, streamed); `url` ends in `/v1`."""

    url_suffix = "/v1"

    def tool_results(self) -> list[str]:
        """The output of each function call the model was sent, call by call, in order."""
        seen: dict[str, str] = {}
        for request in self.requests:
            for item in _items(request):
                if item.get("type") == "function_call_output":
                    output = item.get("output")
                    text = output if isinstance(output, str) else json.dumps(output)
                    seen.setdefault(str(item.get("call_id")), text)
        return list(seen.values())

    def calls_made(self, request: dict[str, Any]) -> int:
        return sum(1 for item in _items(request) if item.get("type") == "function_call")

    def answer(self, handler: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        send_events(handler, _events(self.turn_for(body), len(self.requests)))


def _items(request: dict[str, Any]) -> list[dict[str, Any]]:
    items = request.get("input")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _events(turn: Turn, number: int) -> Iterator[tuple[str, dict[str, Any]]]:
    response = {"id": f"resp_{number}", "object": "response", "status": "in_progress",
                "output": []}  # fmt: skip
    yield _event("response.created", response=response)
    if isinstance(turn, str):
        item: dict[str, Any] = {"type": "message", "id": f"msg_{number}", "role": "assistant",
                                "status": "completed",
                                "content": [{"type": "output_text", "text": turn,
                                             "annotations": []}]}  # fmt: skip
    else:
        item = {"type": "function_call", "id": f"fc_{number}", "call_id": f"call_{number}",
                "name": turn.name, "arguments": json.dumps(turn.input), "status": "completed"}  # fmt: skip
    yield _event("response.output_item.added", output_index=0, item=item)
    yield _event("response.output_item.done", output_index=0, item=item)
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}  # fmt: skip
    done = response | {"status": "completed", "output": [item], "usage": usage}
    yield _event("response.completed", response=done)


def _event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"type": kind, **fields}
