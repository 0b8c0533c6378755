"""A real HTTP server on loopback serving fixed pages, for the `web_fetch` tests.

    with WebServer({"/page": Page("<h1>hi</h1>")}) as server:
        ...  # fetch server.url("/page")

A `Page` may redirect (`location`), stall (`delay_s` before its body) or be large.
Every request's path and Host header are recorded.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any

from support.quiet_server import QuietHTTPServer


@dataclass(frozen=True)
class Page:
    body: str = ""
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    location: str | None = None
    delay_s: float = 0.0


class WebServer:
    def __init__(self, pages: Mapping[str, Page]) -> None:
        self.pages = dict(pages)
        self.requests: list[tuple[str, str]] = []
        self._httpd = QuietHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.02})  # fmt: skip

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self._httpd.server_address[1]}{path}"

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


def _handler(server: WebServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            server.requests.append((self.path, self.headers.get("host", "")))
            page = server.pages.get(self.path, Page("not found", "text/plain", 404))
            body = page.body.encode()
            self.send_response(page.status)
            self.send_header("content-type", page.content_type)
            self.send_header("content-length", str(len(body)))
            if page.location is not None:
                self.send_header("location", page.location)
            self.end_headers()
            time.sleep(page.delay_s)
            with contextlib.suppress(ConnectionError):
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
