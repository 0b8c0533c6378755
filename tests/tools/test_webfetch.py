"""`web_fetch` against a real HTTP server on loopback: what it reads, and what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookgate.config.agentfile import load_agent_file
from hookgate.hooks import ConfigError
from hookgate.hooks.formats.claude_tools import claude_input, claude_tool_name
from hookgate.tools import ToolContext
from hookgate.tools.settings import WebLimits
from hookgate.tools.webfetch import WebFetchTool, is_public
from runtime.project import Project
from support.web_server import Page, WebServer
from tools.conftest import RunTool

HTML = (
    "<html><head><title>t</title><style>p {color: red}</style><script>steal()</script></head>"
    "<body><h1>Release notes</h1><p>Version <b>2.0</b> adds <a href='/docs'>docs</a>.</p>"
    "<ul><li>one</li><li>two</li></ul></body></html>"
)


@pytest.fixture
def local(ctx: ToolContext) -> ToolContext:
    """A context whose agent file allows fetching from loopback, with small bounds."""
    return ctx._replace(web=WebLimits(allow_private=True, max_bytes=4096, timeout=2))


def test_html_becomes_readable_text_without_scripts_or_styles(
    run_tool: RunTool, local: ToolContext
) -> None:
    with WebServer({"/notes": Page(HTML)}) as server:
        result = run_tool(WebFetchTool(), {"url": server.url("/notes")}, local)
    assert not result.is_error, result.content
    assert "# Release notes" in result.content
    assert "Version **2.0** adds [docs](/docs)." in result.content
    assert "* one" in result.content
    assert "steal()" not in result.content
    assert "color: red" not in result.content


def test_loopback_is_refused_unless_the_agent_file_allows_it(
    run_tool: RunTool, ctx: ToolContext
) -> None:
    with WebServer({"/notes": Page(HTML)}) as server:
        result = run_tool(WebFetchTool(), {"url": server.url("/notes", host="localhost")}, ctx)
        assert server.requests == []
    assert result.is_error
    assert "not a public address" in result.content
    assert "allow_private: true" in result.content


def test_a_redirect_to_loopback_is_checked_at_its_hop(run_tool: RunTool, ctx: ToolContext) -> None:
    # The first hop is allowed by the check's own rule (a public name would be); here
    # the redirect's target is what must be refused, so check it directly.
    with WebServer({"/go": Page(status=302, location="http://127.0.0.1:1/secret")}) as server:
        allowed = ctx._replace(web=WebLimits(allow_private=True))
        hops = run_tool(WebFetchTool(), {"url": server.url("/go")}, allowed)
    assert hops.is_error
    assert "127.0.0.1:1" in hops.content
    refused = run_tool(WebFetchTool(), {"url": "http://127.0.0.1:1/secret"}, ctx)
    assert "not a public address" in refused.content


def test_redirects_are_followed_and_bounded(run_tool: RunTool, local: ToolContext) -> None:
    loop = {f"/r{i}": Page(status=302, location=f"/r{i + 1}") for i in range(10)}
    with WebServer(
        {**loop, "/a": Page(status=301, location="/b"), "/b": Page("<p>landed</p>")}
    ) as server:
        followed = run_tool(WebFetchTool(), {"url": server.url("/a")}, local)
        endless = run_tool(WebFetchTool(), {"url": server.url("/r0")}, local)
        hops = len([path for path, _ in server.requests if path.startswith("/r")])
    assert "landed" in followed.content
    assert followed.content.startswith(f"[{server.url('/b')}")
    assert endless.is_error
    assert "more than 5 redirects" in endless.content
    assert hops == 6


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://x"])
def test_only_http_and_https(run_tool: RunTool, local: ToolContext, url: str) -> None:
    result = run_tool(WebFetchTool(), {"url": url}, local)
    assert result.is_error
    assert "only http:// and https://" in result.content


def test_a_large_page_is_cut_and_says_so(run_tool: RunTool, local: ToolContext) -> None:
    with WebServer({"/big": Page("x" * 100_000, "text/plain")}) as server:
        result = run_tool(WebFetchTool(), {"url": server.url("/big")}, local)
    assert "[cut: only the first 4,096 bytes were read]" in result.content
    assert result.content.splitlines()[1] == "x" * 4096


def test_a_slow_page_times_out(run_tool: RunTool, local: ToolContext) -> None:
    quick = local._replace(web=local.web._replace(timeout=0.3))
    with WebServer({"/slow": Page("late", delay_s=3)}) as server:
        result = run_tool(WebFetchTool(), {"url": server.url("/slow")}, quick)
    assert result.is_error
    assert "took more than 0.3s" in result.content


def test_binary_and_errors_are_refused(run_tool: RunTool, local: ToolContext) -> None:
    pages = {"/img": Page("GIF89a", "image/gif"), "/gone": Page("no", status=410)}
    with WebServer(pages) as server:
        image = run_tool(WebFetchTool(), {"url": server.url("/img")}, local)
        gone = run_tool(WebFetchTool(), {"url": server.url("/gone")}, local)
    assert image.is_error
    assert "image/gif, not text" in image.content
    assert gone.is_error
    assert "HTTP 410" in gone.content


def test_the_connection_goes_to_the_checked_address_with_the_name_as_host(
    run_tool: RunTool, local: ToolContext
) -> None:
    with WebServer({"/p": Page("ok", "text/plain")}) as server:
        run_tool(WebFetchTool(), {"url": server.url("/p", host="localhost")}, local)
        port = server.url("/").rsplit(":", 1)[1].rstrip("/")
    assert server.requests == [("/p", f"localhost:{port}")]


@pytest.mark.parametrize(
    ("address", "public"),
    [("8.8.8.8", True), ("127.0.0.1", False), ("10.1.2.3", False), ("169.254.169.254", False),
     ("100.64.0.1", False), ("::1", False), ("::ffff:127.0.0.1", False), ("fe80::1%eth0", False),
     ("2606:4700::1111", True), ("224.0.0.1", False), ("0.0.0.0", False),
     # IPv6 forms that carry an IPv4 address are judged by it as well
     ("64:ff9b::a9fe:a9fe", False), ("64:ff9b::7f00:1", False), ("64:ff9b::808:808", True),
     ("64:ff9b:1::a9fe:a9fe", False), ("64:ff9b:1:a9fe:a9:fe00::", False),
     ("64:ff9b:1::808:808", False),  # local-use NAT64: the operator's, never public
     ("2002:7f00:1::", False), ("2002:a9fe:a9fe::1", False), ("2002:c0a8:101::", False),
     ("2002:808:808::1", True),
     ("::ffff:8.8.8.8", True), ("::ffff:0:127.0.0.1", False), ("::ffff:0:a00:1", False),
     ("::127.0.0.1", False), ("::a9fe:a9fe", False), ("::8.8.8.8", True),
     ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False),  # Teredo, client 192.0.2.45
     ("2001:0:808:808:0:f5ff:80ff:fffe", False),  # Teredo: 8.8.8.8 serves 127.0.0.1
     ("2606:4700::5efe:a00:1", False), ("2606:4700::200:5efe:a9fe:a9fe", False),  # ISATAP
     ("2606:4700::200:5efe:808:808", True),
     # blocks the standard library calls global, which are not (site-local, SRv6,
     # documentation, outside the global unicast space)
     ("fec0::1", False), ("5f00::1", False), ("3fff::1", False), ("4000::1", False)],
)  # fmt: skip
def test_public_addresses(address: str, public: bool) -> None:
    assert is_public(address) is public


@pytest.mark.parametrize(
    ("host", "carried"),
    [("64:ff9b::a9fe:a9fe", "169.254.169.254"), ("2002:7f00:1::", "127.0.0.1"),
     ("::127.0.0.1", "127.0.0.1"), ("2606:4700::5efe:a00:1", "10.0.0.1")],
)  # fmt: skip
def test_print_mode_refuses_an_ipv6_form_of_a_private_address(
    project: Path, host: str, carried: str
) -> None:
    scratch = Project(project, project.parent / "home")
    call = {"name": "web_fetch", "arguments": {"url": f"http://[{host}]/latest/meta-data/"}}
    model = scratch.script({"tool_calls": [call]}, {"text": "Done."})
    scratch.write_agent(model, tools=["web_fetch"], web_fetch={"timeout": "2s"}, yolo=True)
    result = scratch.hookgate("-p", "fetch it")
    assert result.returncode == 0, result.stderr
    (answer,) = [m["content"] for m in scratch.messages() if m["role"] == "tool"]
    assert f"resolves to {host} (carrying {carried}), which is not a public address" in answer


def test_the_agent_file_offers_it_only_when_listed_and_checks_its_settings(tmp_path: Path) -> None:
    plain = tmp_path / "plain.yaml"
    plain.write_text("model: scripted:none.yaml\n")
    assert "web_fetch" not in load_agent_file(plain).tools
    listed = tmp_path / "listed.yaml"
    listed.write_text(
        "model: scripted:none.yaml\ntools: [web_fetch]\n"
        "web_fetch: {allow_private: true, max_bytes: 1000, timeout: 5s}\n"
    )
    config = load_agent_file(listed)
    assert config.tools == ("web_fetch",)
    assert config.web == WebLimits(allow_private=True, max_bytes=1000, timeout=5.0)
    listed.write_text("model: scripted:none.yaml\nweb_fetch: {allow_private: yes please}\n")
    with pytest.raises(ConfigError) as error:
        load_agent_file(listed)
    assert "listed.yaml:2" in str(error.value)
    assert "allow_private" in str(error.value)


def test_claude_hooks_see_it_as_webfetch() -> None:
    arguments = {"url": "https://example.com/", "prompt": "the version"}
    assert claude_tool_name("web_fetch") == "WebFetch"
    assert claude_input("web_fetch", arguments, "/p") == arguments
