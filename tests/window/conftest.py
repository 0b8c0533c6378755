"""The window under test: `hookgate window` as a real subprocess, a real headless Chromium.

`window` starts the command in a scratch project and reads the URL it prints; the
browser is Debian's `chromium` driven through `chromium-driver` by Selenium. Without
chromium the browser tests skip, saying so, except in CI (`CI=true`), where they fail.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from selenium import webdriver
from selenium.common.exceptions import (
    ElementNotInteractableException,
    NoSuchElementException,
    StaleElementReferenceException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from runtime.conftest import anyio_backend, chat_server, project
from runtime.project import HOOKGATE, RUN_TIMEOUT, Project

__all__ = ["anyio_backend", "chat_server", "project"]

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Seconds a page element may take to appear: generous for a loaded two-core machine.
WAIT_S = 15.0
#: Seconds `hookgate window` gets to stop after SIGINT (its turns' postGeneration included).
STOP_S = 15.0


@dataclass
class Window:
    """A running `hookgate window`: its URL (with the token), and the process."""

    url: str
    process: subprocess.Popen[str]

    @property
    def base(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def port(self) -> int:
        port = urlsplit(self.url).port
        assert port is not None
        return port

    @property
    def token(self) -> str:
        return urlsplit(self.url).query.removeprefix("token=")


@pytest.fixture
def start_window(project: Project) -> Iterator[Callable[..., Window]]:
    """`start_window()`: run `hookgate window --no-browser` on the project's agent file;
    `start_window(browser=PROGRAM)` lets it open `$BROWSER`, PROGRAM, instead."""
    started: list[Window] = []

    def start(*args: str, trusted: bool = True, browser: Path | None = None) -> Window:
        if browser is None:
            process = project.start_hookgate("window", "--no-browser", *args, trusted=trusted)
        else:
            process = start_with_browser(project, browser, args)
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("http://"):
            process.wait(RUN_TIMEOUT)
            pytest.fail(f"hookgate window printed {line!r}; stderr: {process.stderr.read()!r}")  # type: ignore[union-attr]
        window = Window(line, process)
        started.append(window)
        return window

    yield start
    for window in started:
        stop(window)


def start_with_browser(
    project: Project, browser: Path, args: tuple[str, ...]
) -> subprocess.Popen[str]:
    """`hookgate window ARGS` opening `$BROWSER`, `browser`; its temporary files go to
    the project's `tmp/` (`$TMPDIR`), where a test can see what is left of them."""
    project.trust()
    (project.dir / "tmp").mkdir(exist_ok=True)
    env = project.env(BROWSER=str(browser), TMPDIR=str(project.dir / "tmp"))
    return subprocess.Popen(
        [str(HOOKGATE), "window", *args], cwd=project.dir, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def stop(window: Window, signals: tuple[int, ...] = (signal.SIGINT,)) -> tuple[int, str]:
    """Ctrl-C the window (or send `signals`) and wait for it: its exit code and stderr."""
    for number in signals:
        if window.process.poll() is None:
            window.process.send_signal(number)
    try:
        _, err = window.process.communicate(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        window.process.kill()
        _, err = window.process.communicate()
        pytest.fail(f"hookgate window did not stop on SIGINT; stderr: {err!r}")
    return window.process.returncode, err


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(path) is None:
            return f"{path} is not installed (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[WebDriver]:
    """One headless Chromium for the whole run (starting one costs a second or two)."""
    missing = chromium_missing()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser tests must run in CI: {missing}")
        pytest.skip(missing)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--window-size=1200,900"):  # fmt: skip
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page(browser: WebDriver) -> Iterator[WebDriver]:
    """The browser, with no dialog left by the test before (nor a cookie, were one set)."""
    yield browser
    browser.delete_all_cookies()
    browser.get("about:blank")


def wait_for(driver: WebDriver, condition: Callable[[WebDriver], Any], what: str) -> Any:
    """`condition`'s first truthy value within `WAIT_S`; a failure names `what`."""
    return WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(
        condition, message=f"the page never showed {what}"
    )


def click(driver: WebDriver, xpath: str, what: str) -> None:
    """Click the element at `xpath` once it is there, even if the page redraws it meanwhile."""

    def clicked(driver: WebDriver) -> bool:
        try:
            driver.find_element(By.XPATH, xpath).click()
        except (
            StaleElementReferenceException,
            NoSuchElementException,
            ElementNotInteractableException,  # there, not shown yet (a closed dialog)
        ):
            return False
        return True

    wait_for(driver, clicked, what)
