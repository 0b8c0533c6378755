"""The `web_fetch` tool: one http(s) page, as readable text, bounded in size, time and reach.

Only http and https. Every hop (the first request and each redirect, at most
`MAX_REDIRECTS`) resolves its host, refuses it unless every address it resolves to is
public (`WebLimits.allow_private` lifts that), then connects to the address it checked,
so a name that resolves differently a moment later cannot lead elsewhere. HTML becomes
Markdown-like text (`markdownify`); other text types come back as they are.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from hookgate.errors import ToolError
from hookgate.hooks.records import NamedTuple
from hookgate.messages import ToolSpec
from hookgate.tools.base import BuiltinTool, ToolContext, ToolResult
from hookgate.tools.settings import WebLimits

if TYPE_CHECKING:
    import httpx2

#: Redirects followed at most; each one is checked like the first request.
MAX_REDIRECTS = 5
#: Content types read as text; any other is refused (no binary reaches the model).
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml")
_REDIRECTS = (301, 302, 303, 307, 308)
_USER_AGENT = "hookgate-web-fetch"
_BLANK_RUNS = re.compile(r"\n\s*\n\s*\n+")


class WebFetchTool(BuiltinTool):
    """Fetch a URL and return its text; needs consent: what it sends leaves the machine."""

    spec = ToolSpec(
        name="web_fetch",
        description=(
            "Fetch an http(s) URL and return the page as readable text (HTML turned into "
            "Markdown). Long pages are cut. 'prompt' says what you are looking for."
        ),
        parameters={
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The http:// or https:// URL."},
                "prompt": {"type": "string", "description": "What to look for on the page."},
            },
            "required": ["url"],
            "additionalProperties": False,
        },
    )
    needs_consent = True

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        url: str = args["url"].strip()
        try:
            async with asyncio.timeout(ctx.web.timeout):
                page = await fetch(url, ctx.web)
        except TimeoutError:
            raise ToolError(f"web_fetch: {url} took more than {ctx.web.timeout:g}s") from None
        return ToolResult(page.as_text())


class Page(NamedTuple):
    """What a fetch read: the final URL, its content type, the body, whether it was cut."""

    url: str
    content_type: str
    body: str
    cut_at: int | None = None

    def as_text(self) -> str:
        text = html_to_text(self.body) if "html" in self.content_type else self.body
        header = f"[{self.url} ({self.content_type or 'no content type'})]"
        note = f"\n[cut: only the first {self.cut_at:,} bytes were read]" if self.cut_at else ""
        return f"{header}\n{text.strip()}{note}"


async def fetch(url: str, limits: WebLimits) -> Page:
    """GET `url`, following redirects each checked anew; `ToolError` for every refusal."""
    import httpx2

    async with httpx2.AsyncClient(trust_env=False, follow_redirects=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            target = await checked_target(url, limits)
            try:
                async with client.stream(**target.request()) as response:
                    if response.status_code in _REDIRECTS and "location" in response.headers:
                        url = urljoin(url, response.headers["location"])
                        continue
                    return await _read(url, response, limits.max_bytes)
            except httpx2.HTTPError as exc:
                raise ToolError(f"web_fetch: {url}: {exc or type(exc).__name__}") from exc
    raise ToolError(f"web_fetch: more than {MAX_REDIRECTS} redirects (last: {url})")


class Target(NamedTuple):
    """One hop: the URL as asked, and the checked address the connection goes to."""

    url: str
    host: str
    address: str

    def request(self) -> dict[str, Any]:
        parts = urlsplit(self.url)
        literal = f"[{self.address}]" if ":" in self.address else self.address
        netloc = literal + (f":{parts.port}" if parts.port else "")
        extensions = {"sni_hostname": self.host} if parts.scheme == "https" else {}
        host_header = parts.netloc.rpartition("@")[2]  # never a userinfo part
        return {
            "method": "GET",
            "url": parts._replace(netloc=netloc).geturl(),
            "headers": {"host": host_header, "user-agent": _USER_AGENT},
            "extensions": extensions,
        }


async def checked_target(url: str, limits: WebLimits) -> Target:
    """The hop to `url`, once its scheme and every address its host resolves to pass."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ToolError(f"web_fetch: only http:// and https:// URLs are fetched, got {url!r}")
    host = parts.hostname
    if not host:
        raise ToolError(f"web_fetch: {url!r} names no host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise ToolError(f"web_fetch: {url!r}: {exc}") from None
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ToolError(f"web_fetch: cannot resolve {host!r}: {exc}") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not limits.allow_private:
        for address in addresses:
            if not is_public(address):
                raise ToolError(
                    f"web_fetch: {host} resolves to {address}{_carrying(address)}, which is not "
                    "a public address; set web_fetch: {allow_private: true} in the agent file "
                    "to allow it"
                )
    return Target(url, host, addresses[0])


def is_public(address: str) -> bool:
    """Whether `address` is a globally routable unicast address (no loopback, private,
    link-local, shared, reserved or multicast one), with every IPv4 address an IPv6 one
    embeds (`embedded_ipv4`) public too: `64:ff9b::a9fe:a9fe` reaches 169.254.169.254."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64_LOCAL:
            return False  # the operator picks where the IPv4 address sits: none to read
        embedded = embedded_ipv4(ip)
        if _routed_as_ipv4(ip):  # the IPv4 address is the destination
            return all(_public(v4) for v4 in embedded)
        if not all(_public(v4) for v4 in embedded):
            return False
    return _public(ip)


def _carrying(address: str) -> str:
    """` (carrying 10.0.0.1)` for an IPv6 address that embeds IPv4 ones, else nothing."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    embedded = embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else ()
    return f" (carrying {', '.join(map(str, embedded))})" if embedded else ""


def _public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and (
        ip not in _GLOBAL_UNICAST or any(ip in network for network in _NOT_GLOBAL_V6)
    ):
        return False
    return ip.is_global and not ip.is_multicast


#: The IPv6 global unicast space (RFC 4291): no other block is routed on the internet.
#: The standard library (3.11) calls global the site-local `fec0::/10` and SRv6's
#: `5f00::/16`, both outside it.
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
#: Blocks inside it that are no destination either, which the standard library (3.11)
#: calls global: the documentation prefix of RFC 9637.
_NOT_GLOBAL_V6 = (ipaddress.IPv6Network("3fff::/20"),)


#: IPv6 forms whose traffic goes to the IPv4 address in their low 32 bits: IPv4-mapped
#: (`::ffff:0:0/96`), SIIT's IPv4-translated (`::ffff:0:0:0/96`, RFC 2765), the deprecated
#: IPv4-compatible (`::/96`, `::1` as 0.0.0.1 included) and NAT64's well-known prefix
#: (`64:ff9b::/96`, RFC 6052). The standard library calls several of them global.
_IPV4_FORMS = tuple(
    ipaddress.IPv6Network(prefix)
    for prefix in ("::ffff:0:0/96", "::ffff:0:0:0/96", "::/96", "64:ff9b::/96")
)
#: NAT64's local-use prefix (RFC 8215): never a public destination.
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
#: ISATAP interface identifiers (RFC 5214): `0:5efe` or `200:5efe`, then an IPv4 address.
_ISATAP_MARKS = (0x00005EFE, 0x02005EFE)


def _routed_as_ipv4(ip: ipaddress.IPv6Address) -> bool:
    return any(ip in network for network in _IPV4_FORMS)


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """Every IPv4 address `ip` carries that its traffic may be sent to: the low 32 bits
    of an `_IPV4_FORMS` address, 6to4's (`2002::/16`), Teredo's server and its client
    (de-obfuscated; `2001::/32`), an ISATAP interface identifier's (any prefix)."""
    value = int(ip)
    low = ipaddress.IPv4Address(value & 0xFFFFFFFF)
    found: list[ipaddress.IPv4Address] = []
    if _routed_as_ipv4(ip):
        found.append(low)
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    if (value >> 32) & 0xFFFFFFFF in _ISATAP_MARKS:
        found.append(low)
    return tuple(found)


async def _read(url: str, response: httpx2.Response, cap: int) -> Page:
    content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if response.status_code >= 400:
        raise ToolError(f"web_fetch: {url}: HTTP {response.status_code}")
    if content_type and not content_type.startswith(_TEXT_TYPES):
        raise ToolError(f"web_fetch: {url} is {content_type}, not text")
    received = bytearray()
    cut_at: int | None = None
    async for chunk in response.aiter_bytes():
        received.extend(chunk)
        if len(received) > cap:
            del received[cap:]
            cut_at = cap
            break
    body = bytes(received).decode(response.encoding or "utf-8", "replace")
    return Page(url, content_type, body, cut_at)


def html_to_text(html: str) -> str:
    """HTML as Markdown-like text: headings, links and lists kept; scripts and styles gone."""
    from markdownify import markdownify  # only a session that fetches pays its import

    text: str = markdownify(html, heading_style="ATX")
    return _BLANK_RUNS.sub("\n\n", text)
