"""The window's token stays with the window: on no command line, in no cookie.

Every local user reads every command line (`ps`, /proc/PID/cmdline), so the browser is
started with a file only the user can read, which sends it on to the address with the
token. And a browser sends a host's cookies to every port of it: another listener on
127.0.0.1 (another user's, a dev server) would get a cookie the window set. So the page
keeps the token in sessionStorage, its own origin's, and sends it in a header.
"""

from __future__ import annotations

import html
import http.server
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

import httpx2
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from runtime.project import RUN_TIMEOUT, Project
from window.conftest import Window, stop, wait_for
from window.test_window_page import ask, opened, turn_ended


class FakeBrowser:
    """A `$BROWSER` that writes down its arguments and lives on, as a browser does."""

    def __init__(self, folder: Path) -> None:
        self.program = folder / "browser"
        self._argv = folder / "browser.argv"
        self._pid = folder / "browser.pid"
        os.mkfifo(self._argv)  # read by `argv`: it waits for the browser's start
        self.program.write_text(
            f"#!/bin/sh\nexec >/dev/null 2>&1 </dev/null\nsleep {RUN_TIMEOUT} &\n"
            f'echo $$ $! > "{self._pid}"\nprintf "%s\\n" "$@" > "{self._argv}"\nwait\n'
        )
        self.program.chmod(0o755)

    def argv(self) -> list[str]:
        """Its arguments, once it was started (until then, this waits)."""
        return self._argv.read_text().splitlines()

    def kill(self) -> None:
        with suppress(FileNotFoundError):
            for pid in self._pid.read_text().split():
                with suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)


@pytest.fixture
def browser_program(tmp_path: Path) -> Iterator[FakeBrowser]:
    browser = FakeBrowser(tmp_path)
    yield browser
    browser.kill()


def command_lines() -> list[str]:
    """Every process's command line, as any user of the machine reads them."""
    lines = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        with suppress(OSError):  # a process that ended meanwhile
            lines.append(path.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
    return lines


@pytest.mark.parametrize("signals", [(signal.SIGINT,), (signal.SIGTERM,), (signal.SIGHUP,)])
def test_the_browser_is_given_a_private_file_and_no_command_line_holds_the_token(
    project: Project,
    start_window: Callable[..., Window],
    browser_program: FakeBrowser,
    signals: tuple[int, ...],
) -> None:
    project.write_agent(project.script({"text": "hi"}))
    window = start_window(browser=browser_program.program)

    [given] = browser_program.argv()
    assert [line for line in command_lines() if window.token in line] == []
    opener = Path(urlsplit(given).path)
    assert given == opener.as_uri()  # a file:// address
    mode, folder_mode = (stat.S_IMODE(p.stat().st_mode) for p in (opener, opener.parent))
    leads_to = html.unescape(opener.read_text())
    assert httpx2.get(f"{window.base}/", timeout=10).status_code == 200  # serving
    code, err = stop(window, signals)

    assert (mode, folder_mode) == (0o600, 0o700)  # this user's alone, in a folder of its own
    assert opener.parent.parent == project.dir / "tmp"  # made where $TMPDIR says
    assert window.url in leads_to
    assert code in (130, -signals[0]), err
    assert list((project.dir / "tmp").iterdir()) == []  # removed when the window stopped


def test_the_file_the_browser_is_given_opens_the_window(
    project: Project,
    start_window: Callable[..., Window],
    browser_program: FakeBrowser,
    page: WebDriver,
) -> None:
    project.write_agent(project.script({"text": "opened"}))
    window = start_window(browser=browser_program.program)
    [given] = browser_program.argv()

    page.get(given)
    wait_for(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#open-sessions li"), "a session")
    ask(page, "hello")
    turn_ended(page, "answered")

    assert page.current_url == f"{window.base}/"
    assert "opened" in page.find_element(By.CSS_SELECTOR, ".answer").text


def test_the_token_leaves_the_address_bar_and_a_reload_keeps_the_window_working(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    project.write_agent(project.script({"text": "first answer"}, {"text": "second answer"}))
    window = start_window()
    opened(page, window)
    ask(page, "question one")
    turn_ended(page, "answered")

    assert page.current_url == f"{window.base}/"
    assert page.get_cookies() == []
    page.refresh()
    wait_for(page, lambda d: d.find_elements(By.CSS_SELECTOR, ".answer"), "the first answer")
    ask(page, "question two")
    turn_ended(page, "answered")

    questions = [q.text for q in page.find_elements(By.CSS_SELECTOR, ".question")]
    assert questions == ["question one", "question two"]
    assert "second answer" in page.find_elements(By.CSS_SELECTOR, ".answer")[-1].text
    assert len(page.find_elements(By.CSS_SELECTOR, "#open-sessions li")) == 1


class _Listener(http.server.BaseHTTPRequestHandler):
    """Another server on 127.0.0.1 (another user's): writes down every request it gets."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen.append(f"{self.requestline}\n{self.headers}")
        body = (
            b'<!doctype html><img src="/picture.png"><p>another port' if self.path == "/" else b""
        )
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def other_port() -> Iterator[tuple[str, list[str]]]:
    """Another listener on 127.0.0.1: its address and what it was sent."""
    seen: ClassVar[list[str]] = []
    handler = type("Listener", (_Listener,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_another_port_of_loopback_receives_nothing_of_the_token(
    project: Project,
    start_window: Callable[..., Window],
    page: WebDriver,
    other_port: tuple[str, list[str]],
) -> None:
    """The same site to a browser (ports do not count): it sends that port what it sends
    to every port of 127.0.0.1, and the window's page leads there as a link would."""
    address, seen = other_port
    project.write_agent(project.script({"text": "never"}))
    window = start_window()
    opened(page, window)

    page.execute_script("location.href = arguments[0]", f"{address}/")
    wait_for(page, lambda d: any("picture.png" in request for request in seen), "another port")
    before = len(seen)
    page.get(f"{address}/typed")  # and once more, typed in the address bar
    wait_for(page, lambda d: len(seen) > before, "another port again")

    assert [request for request in seen if window.token in request] == []
    assert [request for request in seen if "cookie" in request.lower()] == []
