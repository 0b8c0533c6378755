"""What the model reads of an MCP result, and the names MCP tools are offered under."""

from __future__ import annotations

import pytest
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from hookgate.mcp.tools import cap, result_text, tool_name


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("docs", "fetch", "mcp__docs__fetch"),
        ("my-docs", "get.page/v2", "mcp__my-docs__get_page_v2"),
        ("docs", "search_all", "mcp__docs__search_all"),
    ],
)
def test_tool_name_is_prefixed_by_server_and_safe_for_model_apis(
    server: str, tool: str, expected: str
) -> None:
    assert tool_name(server, tool) == expected


def test_text_blocks_are_joined_and_other_blocks_are_named() -> None:
    result = CallToolResult(
        content=[
            TextContent(type="text", text="first"),
            ImageContent(type="image", data="AAAA", mime_type="image/png"),
            ResourceLink(type="resource_link", name="doc", uri="file:///doc.md"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///a.txt", text="embedded text"),
            ),
            EmbeddedResource(
                type="resource", resource=BlobResourceContents(uri="file:///b.bin", blob="AA==")
            ),
        ]
    )

    assert result_text(result).splitlines() == [
        "first",
        "[image (image/png) omitted]",
        "[resource link: file:///doc.md]",
        "embedded text",
        "[binary resource file:///b.bin omitted]",
    ]


def test_structured_content_alone_is_read_as_json() -> None:
    result = CallToolResult(content=[], structured_content={"temperature": 21})

    assert result_text(result) == '{"temperature": 21}'


def test_cap_cuts_at_a_byte_limit_and_says_so() -> None:
    assert cap("short", 10) == "short"
    assert cap("é" * 10, 5) == "éé\n[output truncated: 15 more bytes]"
