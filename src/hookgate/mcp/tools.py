"""MCP tools as hookgate `Tool`s: named `mcp__<server>__<tool>`, run through the server.

An `McpTool` is an ordinary tool to the rest of the runtime: `call_tool` runs the
same hooks, policy and consent on it as on a built-in one. It always wants consent
(what a server says about its own tools is not trusted); an `allow` rule lifts that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp.types import Tool as RemoteTool

from hookgate.mcp.connection import McpConnection, McpServerError
from hookgate.messages import ToolSpec
from hookgate.tools import ToolContext, ToolResult
from hookgate.tools.shell import set_aside_notes

PREFIX = "mcp__"
SEPARATOR = "__"
#: Characters model APIs accept in a tool name; others become `_`.
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """The name the model and the hooks see: `mcp__<server>__<tool>`."""
    return f"{PREFIX}{server}{SEPARATOR}{_UNSAFE.sub('_', tool)}"


@dataclass(frozen=True)
class McpTool:
    """One tool of one MCP server."""

    spec: ToolSpec
    server: McpConnection
    remote_name: str
    """The tool's own name on its server."""
    needs_consent: bool = True

    async def run(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        bounds = self.server.boundaries
        absent = [] if bounds is None else bounds.absent_outside()
        try:
            result = await self.server.call(self.remote_name, arguments)
        except McpServerError as exc:
            return ToolResult(
                f"[{self.spec.name} failed: MCP server {self.server.name!r}: {exc}]", is_error=True
            )
        except Exception as exc:  # the SDK's own failures must not end the turn either
            return ToolResult(
                f"[{self.spec.name} failed: {type(exc).__name__}: {exc}]", is_error=True
            )
        notes = set_aside_notes(absent, ctx, by="this call") if absent else ""
        text = cap(result_text(result), ctx.output_cap) + notes
        return ToolResult(text, is_error=result.is_error)


def mcp_tools(server: McpConnection, remote: list[RemoteTool]) -> tuple[list[McpTool], list[str]]:
    """The server's tools, and a notice for each one left out (a name taken twice)."""
    tools: dict[str, McpTool] = {}
    skipped: list[str] = []
    for item in remote:
        name = tool_name(server.name, item.name)
        if name in tools:
            skipped.append(
                f"MCP server {server.name!r}: tool {item.name!r} left out: "
                f"its name {name!r} is taken by another of its tools"
            )
            continue
        schema = item.input_schema or {"type": "object"}
        spec = ToolSpec(name, item.description or item.title or "", dict(schema))
        tools[name] = McpTool(spec, server, item.name)
    return list(tools.values()), skipped


def result_text(result: CallToolResult) -> str:
    """What the model reads of a result: its text blocks, and a line for anything else."""
    parts = [_block_text(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def _block_text(block: object) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent | AudioContent):
        kind = "image" if isinstance(block, ImageContent) else "audio"
        return f"[{kind} ({block.mime_type}) omitted]"
    if isinstance(block, ResourceLink):
        return f"[resource link: {block.uri}]"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return resource.text
        if isinstance(resource, BlobResourceContents):
            return f"[binary resource {resource.uri} omitted]"
    return f"[{type(block).__name__} omitted]"


def cap(text: str, limit: int) -> str:
    """`text` cut to at most `limit` bytes of UTF-8, saying how much was left out."""
    data = text.encode()
    if len(data) <= limit:
        return text
    kept = data[:limit].decode(errors="ignore")
    return f"{kept}\n[output truncated: {len(data) - limit} more bytes]"
