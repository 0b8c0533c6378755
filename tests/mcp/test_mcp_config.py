"""`mcp_servers:` in the agent file: read strictly, every mistake named where it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookgate.config.agentfile import load_agent_file
from hookgate.errors import ConfigError
from hookgate.mcp import DEFAULT_TIMEOUT, HttpServer, StdioServer


def agent_file(tmp_path: Path, servers: str) -> Path:
    path = tmp_path / "hookgate.yaml"
    path.write_text(f"model: scripted:s.yaml\nmcp_servers:\n{servers}")
    return path


def test_stdio_and_http_servers_are_read_with_their_settings(tmp_path: Path) -> None:
    path = agent_file(
        tmp_path,
        "  docs:\n"
        "    command: uvx\n"
        "    args: [mcp-server-fetch, --ignore-robots-txt]\n"
        "    env: {TOKEN: abc}\n"
        "    cwd: servers\n"
        "    timeout: 5\n"
        "  remote:\n"
        "    url: https://example.test/mcp\n"
        "    headers: {Authorization: Bearer x}\n",
    )

    servers = load_agent_file(path).mcp_servers

    assert servers == {
        "docs": StdioServer(
            "docs",
            "uvx",
            ("mcp-server-fetch", "--ignore-robots-txt"),
            {"TOKEN": "abc"},
            (tmp_path / "servers").resolve(),
            5.0,
        ),
        "remote": HttpServer(
            "remote", "https://example.test/mcp", {"Authorization": "Bearer x"}, DEFAULT_TIMEOUT
        ),
    }


def test_no_servers_is_an_empty_mapping(tmp_path: Path) -> None:
    assert load_agent_file(agent_file(tmp_path, "")).mcp_servers == {}


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        (
            "  docs: {comand: uvx}\n",
            ":3: mcp_servers.docs: an MCP server needs 'command' (stdio) or 'url'",
        ),
        (
            "  docs: {command: uvx, headers: {A: b}}\n",
            ":3: mcp_servers.docs.headers: unknown key 'headers'",
        ),
        (
            "  docs:\n    url: http://x/mcp\n    args: [a]\n",
            ":5: mcp_servers.docs.args: unknown key 'args'",
        ),
        ("  docs: {command: uvx, url: http://x}\n", "mcp_servers.docs: both 'command' and 'url'"),
        ("  docs: {url: ftp://x}\n", "mcp_servers.docs.url: expected an http:// or https:// URL"),
        ("  a__b: {command: uvx}\n", ":3: mcp_servers.a__b: invalid server name 'a__b'"),
        ("  docs: {command: uvx, args: [--port, 80]}\n", "mcp_servers.docs.args: expected a list"),
        (
            "  docs: {command: uvx, env: {N: 1}}\n",
            "mcp_servers.docs.env.N: expected a string value",
        ),
        ("  docs: {command: uvx, timeout: 0}\n", "mcp_servers.docs.timeout: expected a positive"),
        (
            "  docs: {url: 'http://x', start_timeout: -1}\n",
            "mcp_servers.docs.start_timeout: expected a positive",
        ),
        ("  docs: uvx\n", "mcp_servers.docs: expected an MCP server (a mapping)"),
    ],
)
def test_a_mistake_names_file_line_and_key_path(
    tmp_path: Path, servers: str, expected: str
) -> None:
    path = agent_file(tmp_path, servers)

    with pytest.raises(ConfigError) as raised:
        load_agent_file(path)

    message = str(raised.value)
    assert message.startswith(str(path.resolve())), message
    assert expected in message


def test_unknown_key_hints_at_the_key_meant(tmp_path: Path) -> None:
    path = agent_file(tmp_path, "  docs: {command: uvx, argz: [a]}\n")

    with pytest.raises(ConfigError) as raised:
        load_agent_file(path)

    assert raised.value.hint == "did you mean 'args'?"
