"""Who may talk to the window: the holder of its token, on its own origin, on loopback.

An ASGI middleware in front of every route, static files and streams included:
- `Host` must name the loopback address and port the window listens on, so that a
  page of another site that rebinds its DNS name to 127.0.0.1 is refused;
- `Origin`, when sent, must be the window's own, and a request that changes something
  (anything but GET) must send it: no other site's page can submit to the window;
- every other route than the page and its files (the API, the event streams) needs the
  token in an `Authorization: Bearer` header, which the page sends from its tab's
  sessionStorage (its own origin's: scheme, host and port). Never a cookie: a browser
  sends a host's cookies to every port of it, so any other listener on 127.0.0.1 would
  get one. Never in an API address either, where it could be logged or sent on. The
  page and its files hold no secret: the page takes the token from the address it is
  opened at, `/?token=…`, and takes it out of the address bar.
Anything else is answered 403 before any route runs.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The query parameter the window's URL carries its token in (read by the page alone).
TOKEN_PARAMETER = "token"
#: The `Authorization` scheme the page sends the token with.
SCHEME = "bearer"
#: Paths that hold no secret and load without the token: the page (it has to load to
#: read the token from its address, and again on a reload) and what it loads by itself.
PUBLIC_PATHS = frozenset({"/", "/code.css"})
#: The prefix of the page's static files, public too.
PUBLIC_PREFIX = "/static/"
#: Bytes of randomness in a token (256 bits).
TOKEN_BYTES = 32
#: The host names the window answers to; only ever bound on 127.0.0.1.
LOOPBACK_NAMES = ("127.0.0.1", "localhost")


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


class TokenGuard:
    """The middleware: `app` runs only for a request that passes every check."""

    def __init__(self, app: App, *, token: str, port: int) -> None:
        self._app = app
        self._token = token.encode()
        self._hosts = {f"{name}:{port}" for name in LOOPBACK_NAMES}
        self._origins = {f"http://{host}" for host in self._hosts}

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
        await self._app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> str | None:
        """Why the request is refused, or None."""
        if headers.get("host") not in self._hosts:
            return "forbidden: this window answers only to its own loopback address\n"
        origin = headers.get("origin")
        if origin is not None and origin not in self._origins:
            return "forbidden: requests from other sites are refused\n"
        if origin is None and scope.get("method", "GET") != "GET":
            return "forbidden: a request that changes something must say its Origin\n"
        if not _public(scope["path"]) and not self._token_in(headers.get("authorization", "")):
            return "forbidden: open the window with the URL hookgate printed (it holds the token)\n"
        return None

    def _token_in(self, authorization: str) -> bool:
        """Whether an `Authorization` header's value is `Bearer TOKEN`."""
        scheme, _, value = authorization.partition(" ")
        return scheme.lower() == SCHEME and secrets.compare_digest(
            value.strip().encode("latin-1"), self._token
        )


def _public(path: str) -> bool:
    """Whether `path` is the page or one of its files, which hold no secret."""
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIX)


async def _respond(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
    ]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})
