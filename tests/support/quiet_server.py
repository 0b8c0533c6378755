"""The loopback test servers' base: a client hanging up mid-request is not an error.

Tests kill hookgate and cut timeouts on purpose; the stdlib server would print a
`ConnectionResetError` traceback into the test log each time.
"""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)
