"""The pieces of an ACP session that need no editor: prompt text, titles, editor servers."""

from __future__ import annotations

from acp.schema import (
    EmbeddedResourceContentBlock,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    ResourceContentBlock,
    SseMcpServer,
    TextContentBlock,
    TextResourceContents,
)

from hookgate.frontends.acp.session import editor_mcp_servers, prompt_text, tool_title
from hookgate.mcp import HttpServer, StdioServer


def test_prompt_text_keeps_embedded_resources_inline_for_the_hooks_to_see() -> None:
    blocks = [
        TextContentBlock(type="text", text="Explain this:"),
        EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri="file:///a.py", text="x = 1")
        ),
        ResourceContentBlock(type="resource_link", name="b", uri="file:///b.py"),
    ]

    assert prompt_text(blocks) == (
        'Explain this:\n<resource uri="file:///a.py">\nx = 1\n</resource>\n[resource: file:///b.py]'
    )


def test_tool_title_shows_the_argument_rules_match_on() -> None:
    assert tool_title("shell", {"command": "git status"}) == "shell: git status"
    assert tool_title("mcp__docs__fetch", {"url": "x"}) == "mcp__docs__fetch"
    assert tool_title("read_file", {"path": "a" * 100}).endswith("…")


def test_editor_servers_get_safe_names_and_clashes_are_notices() -> None:
    notices: list[str] = []
    servers = [
        McpServerStdio(
            name="My Docs", command="uvx", args=["x"], env=[EnvVariable(name="K", value="v")]
        ),
        HttpMcpServer(
            type="http", name="web", url="http://h/mcp", headers=[HttpHeader(name="A", value="b")]
        ),
        McpServerStdio(name="files", command="x", args=[], env=[]),
        SseMcpServer(type="sse", name="old", url="http://h/sse", headers=[]),
    ]

    configs = editor_mcp_servers(servers, taken={"files": object()}, notify=notices.append)

    assert configs == {
        "My_Docs": StdioServer("My_Docs", "uvx", ("x",), {"K": "v"}),
        "web": HttpServer("web", "http://h/mcp", {"A": "b"}),
    }
    assert notices == [
        "the editor's MCP server 'files' is left out: 'files' is taken",
        "the editor's MCP server 'old' is left out: only stdio and HTTP",
    ]
