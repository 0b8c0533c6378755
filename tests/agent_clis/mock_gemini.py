"""A scripted Gemini API on loopback, for the real Gemini CLI: `generateContent` and
`streamGenerateContent` (server-sent events). A request that asks for JSON by schema
(Gemini CLI's routing question, before the turn) gets an object that fits the schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from agent_clis.scripted import ScriptedServer, Turn, send_events, send_json


class MockGemini(ScriptedServer):
    """The Gemini API (`POST /v1beta/models/MODEL:…`)."""

    def tool_results(self) -> list[str]:
        """The response of each function call the model was sent, call by call, in order."""
        seen: list[str] = []
        for request in self.requests:
            made = [json.dumps(part["functionResponse"].get("response"))
                    for part in _parts(request) if "functionResponse" in part]  # fmt: skip
            seen += made[len(seen) :]
        return seen

    def calls_made(self, request: dict[str, Any]) -> int:
        return sum(1 for part in _parts(request) if "functionCall" in part)

    def answer(self, handler: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if schema is not None or config.get("responseMimeType") == "application/json":
            reply = _response({"text": json.dumps(_fitting(schema or {}))})
        else:
            reply = _response(_part(self.turn_for(body)))
        if ":streamGenerateContent" in path:
            send_events(handler, [(None, reply)])
        elif ":countTokens" in path:
            send_json(handler, {"totalTokens": 10})
        else:
            send_json(handler, reply)


def _parts(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for content in request.get("contents") or []:
        for part in content.get("parts") or []:
            if isinstance(part, dict):
                yield part


def _part(turn: Turn) -> dict[str, Any]:
    if isinstance(turn, str):
        return {"text": turn}
    return {"functionCall": {"name": turn.name, "args": turn.input}}


def _response(part: dict[str, Any]) -> dict[str, Any]:
    candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "mock"}


def _fitting(schema: dict[str, Any]) -> Any:
    """A value that fits the JSON schema `schema`: the first choice of each enum."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        return {key: _fitting(value) for key, value in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return schema.get("minimum", 0)
    return {"string": "mock", "boolean": False}.get(kind)
