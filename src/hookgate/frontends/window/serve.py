"""`hookgate window`: check the agent file, bind loopback, print the URL, serve until stopped.

The URL (with the token) is the one line on stdout. Unless `--no-browser`, the browser
is started with a file only this user reads, whose page sends it on to the URL: every
local user reads every command line (`ps`), so none carries the token. Ctrl-C, SIGTERM
or SIGHUP stops the server (a second signal changes nothing): running turns are
cancelled, their postGeneration hooks run, every session is closed, the file is
removed, and hookgate exits 130, 143 or 129.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from hookgate.frontends.terminal import notice_line
from hookgate.frontends.window import DEFAULT_MAX_SESSIONS
from hookgate.frontends.window.guard import TOKEN_PARAMETER, new_token
from hookgate.hooks import HookgateError
from hookgate.runtime.interrupts import ignored
from hookgate.security.trust.check import load_trusted
from hookgate.store.session import SessionStore

#: The only address the window binds: nobody on the network can reach it.
HOST = "127.0.0.1"
#: Connections the kernel queues until the server accepts them (uvicorn's default).
BACKLOG = 2048
#: Seconds open streams get to end when the server stops, before they are cut.
GRACEFUL_SHUTDOWN = 2
#: The page the browser is opened at: it sends the browser on to the window's URL
#: (filled in, escaped), sending no `Referer`.
OPENER_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url={url}"><title>hookgate</title></head>
<body><p><a href="{url}">Open the hookgate window</a></p></body></html>
"""


def window_mode(
    agent_file: Path, *, port: int, open_browser: bool, max_sessions: int = DEFAULT_MAX_SESSIONS
) -> int:
    # An untrusted (or broken) agent file stops the command here, before anything of
    # it runs: `hookgate trust` first, as for every entry point.
    load_trusted(agent_file)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((HOST, port))
    except OSError as exc:
        listener.close()
        raise HookgateError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc} "
                            "(choose another --port, or 0 for any free one)") from exc  # fmt: skip
    # Listening before the URL is printed: a browser quicker than the server's start
    # waits in the backlog instead of being refused.
    listener.listen(BACKLOG)
    bound = listener.getsockname()[1]
    token = new_token()
    url = f"http://{HOST}:{bound}/?{TOKEN_PARAMETER}={token}"
    print(url, flush=True)
    notice_line("the window is served at the URL above; Ctrl-C stops it")
    with contextlib.ExitStack() as leftovers:
        if open_browser:
            opener = leftovers.enter_context(opener_file(url))
            # webbrowser may wait for the browser it starts: never on the server's thread.
            threading.Thread(target=webbrowser.open, args=(opener.as_uri(),), daemon=True).start()
        served = _serve(agent_file.resolve(), listener, token, bound, max_sessions, leftovers)
        return asyncio.run(served)


@contextlib.contextmanager
def opener_file(url: str) -> Iterator[Path]:
    """A page that sends the browser on to `url`, in a folder of its own that only this
    user can open (`$TMPDIR`'s, mode 0700; the file 0600), removed on leaving."""
    folder = Path(tempfile.mkdtemp(prefix="hookgate-window-"))
    try:
        page = folder / "open.html"
        descriptor = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(OPENER_PAGE.format(url=html.escape(url)))
        yield page
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def _serve(
    agent_file: Path,
    listener: socket.socket,
    token: str,
    port: int,
    max_sessions: int,
    leftovers: contextlib.ExitStack,
) -> int:
    import uvicorn  # the window's own dependencies: imported only when it runs

    from hookgate.frontends.window.app import build_app
    from hookgate.frontends.window.hub import Hub
    from hookgate.frontends.window.shortage import quiet_shortage_handler

    hub = Hub(agent_file, SessionStore(), Path.cwd(), max_sessions)
    from hookgate.listening import bounded_protocol, raise_open_files_limit, server_options

    raise_open_files_limit()
    config = uvicorn.Config(
        build_app(hub, token=token, port=port), log_level="warning", access_log=False,
        lifespan="on", timeout_graceful_shutdown=GRACEFUL_SHUTDOWN, ws="none",
        http=bounded_protocol(), **server_options(),
    )  # fmt: skip
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(quiet_shortage_handler)

    class WindowServer(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            """SIGHUP (a closed terminal) stops the window as SIGTERM does, unless it
            was started ignoring it (`nohup`): then it outlives the terminal.

            `leftovers` (the browser's opener file) are removed first: uvicorn raises a
            caught SIGTERM or SIGHUP again on leaving, which ends the process."""
            with super().capture_signals(), leftovers:
                if ignored(signal.SIGHUP):
                    yield
                    return
                previous = signal.signal(signal.SIGHUP, self.handle_exit)
                try:
                    yield
                finally:  # restored first: the signal is raised again once all is closed
                    signal.signal(signal.SIGHUP, previous)

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            super().handle_exit(sig, frame)
            # A second Ctrl-C must not skip closing the sessions (their postGeneration).
            self.force_exit = False
            # Called in a signal handler: the loop sets the event at its next turn.
            loop.call_soon_threadsafe(hub.closing.set)

    server = WindowServer(config)
    await server.serve(sockets=[listener])
    sys.stderr.flush()
    return 0
