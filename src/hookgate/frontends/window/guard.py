"""Who may talk to the window: the holder of its token, on its own origin, on loopback.

An ASGI middleware in front of every route, static files and streams included:
- `Host` must name the loopback address and port the window listens on, so that a
  page of another site that rebinds its DNS name to 127.0.0.1 is refused;
- `Origin`, when sent, must be the window's own, and a request that changes something
  (anything but GET) must send it: no other site's page can submit to the window;
- the token: in the cookie the first load sets (HttpOnly, SameSite=Strict), or in the
  URL the window was opened with. That first load answers with a redirect to `/` that
  sets the cookie, so the token leaves the address bar and the browser history.
Anything else is answered 403 before any route runs.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The query parameter the window's URL carries its token in.
TOKEN_PARAMETER = "token"
#: Bytes of randomness in a token (256 bits).
TOKEN_BYTES = 32
#: The host names the window answers to; only ever bound on 127.0.0.1.
LOOPBACK_NAMES = ("127.0.0.1", "localhost")


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def cookie_name(port: int) -> str:
    """Cookies ignore ports: two windows at once must not overwrite each other's."""
    return f"hookgate_window_{port}"


class TokenGuard:
    """The middleware: `app` runs only for a request that passes every check."""

    def __init__(self, app: App, *, token: str, port: int) -> None:
        self._app = app
        self._token = token.encode()
        self._hosts = {f"{name}:{port}" for name in LOOPBACK_NAMES}
        self._origins = {f"http://{host}" for host in self._hosts}
        self._cookie = cookie_name(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, receive, send)
            return
        if scope["type"] != "http":  # the window speaks no WebSocket
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = {key.decode("latin-1"): value.decode("latin-1")
                   for key, value in scope["headers"]}  # fmt: skip
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _respond(send, 403, refusal)
            return
        if self._token_in(_cookie(headers.get("cookie", ""), self._cookie)):
            await self._app(scope, receive, send)
        elif scope["method"] == "GET" and scope["path"] == "/":
            await self._set_cookie(send)  # passed `_refusal`: the token is in the URL
        else:
            await self._app(scope, receive, send)  # a script or test with ?token=

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> str | None:
        """Why the request is refused, or None."""
        if headers.get("host") not in self._hosts:
            return "forbidden: this window answers only to its own loopback address\n"
        origin = headers.get("origin")
        if origin is not None and origin not in self._origins:
            return "forbidden: requests from other sites are refused\n"
        if origin is None and scope.get("method", "GET") != "GET":
            return "forbidden: a request that changes something must say its Origin\n"
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        offered = [
            *query.get(TOKEN_PARAMETER, []),
            _cookie(headers.get("cookie", ""), self._cookie),
        ]
        if not any(self._token_in(value) for value in offered):
            return "forbidden: open the window with the URL hookgate printed (it holds the token)\n"
        return None

    def _token_in(self, value: str | None) -> bool:
        return value is not None and secrets.compare_digest(value.encode(), self._token)

    async def _set_cookie(self, send: Send) -> None:
        cookie = (f"{self._cookie}={self._token.decode()}; Path=/; HttpOnly; "
                  "SameSite=Strict")  # fmt: skip
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", b"/"), (b"set-cookie", cookie.encode()), (b"cache-control", b"no-store"),
            (b"content-length", b"0"),
        ]})  # fmt: skip
        await send({"type": "http.response.body", "body": b""})


def _cookie(header: str, name: str) -> str | None:
    cookies: SimpleCookie = SimpleCookie()
    try:
        cookies.load(header)
    except Exception:  # a malformed Cookie header holds no token of ours
        return None
    morsel = cookies.get(name)
    return morsel.value if morsel is not None else None


async def _respond(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
    ]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})
