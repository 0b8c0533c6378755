"""Several sessions in one window: a new one, switching back, resuming a saved one."""

from __future__ import annotations

import http.server
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from runtime.project import HOOKGATE, Project, read_log
from window.conftest import Window, click, stop, wait_for
from window.test_window_guard import ask as ask_over_http
from window.test_window_guard import client, open_session
from window.test_window_page import ask, opened, tool_row, turn_ended


def test_a_new_session_and_back_again(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    project.write_agent(project.script({"text": "first answer"}, {"text": "second answer"}))
    opened(page, start_window())
    ask(page, "question one")
    turn_ended(page, "answered")

    page.find_element(By.ID, "new-session").click()
    wait_for(page, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#open-sessions li")) == 2,
             "two sessions")  # fmt: skip
    assert page.find_elements(By.CSS_SELECTOR, ".question") == []
    ask(page, "question two")
    turn_ended(page, "answered")
    click(page, "//ul[@id='open-sessions']//button[.='question one']", "the first session")

    wait_for(page, lambda d: d.find_elements(By.CSS_SELECTOR, ".answer"), "the first session")
    assert [q.text for q in page.find_elements(By.CSS_SELECTOR, ".question")] == ["question one"]
    assert "first answer" in page.find_element(By.CSS_SELECTOR, ".answer").text


def test_a_saved_session_is_resumed_with_its_conversation(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    (project.dir / "notes.txt").write_text("milk\n")
    project.write_agent(project.script(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "You need **milk**."},
    ))  # fmt: skip
    first = start_window()
    opened(page, first)
    ask(page, "what do I need?")
    turn_ended(page, "answered")
    code, err = stop(first)
    assert code == 130, err  # Ctrl-C, as everywhere in hookgate
    assert "Traceback" not in err
    project.script({"expect": "and after that?", "text": "Nothing else."})  # a new process

    opened(page, start_window())
    click(page, "//ul[@id='saved-sessions']//button[contains(., 'what do I need?')]",
          "the saved session")  # fmt: skip

    wait_for(page, lambda d: d.find_elements(By.CSS_SELECTOR, ".answer strong"), "the old answer")
    assert page.find_element(By.CSS_SELECTOR, ".question").text == "what do I need?"
    assert "milk" in tool_row(page).find_element(By.CSS_SELECTOR, ".tool-result").get_attribute(
        "textContent"
    )
    ask(page, "and after that?")
    turn_ended(page, "answered")
    assert "Nothing else." in page.find_elements(By.CSS_SELECTOR, ".answer")[-1].text


class _EvilPage(http.server.BaseHTTPRequestHandler):
    """Another site's page, which tries to drive the window it knows the port of."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>evil</title><p>evil"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def evil_site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EvilPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_browser_is_refused_without_the_token_and_from_another_site(
    project: Project, start_window: Callable[..., Window], page: WebDriver, evil_site: str
) -> None:
    project.write_agent(project.script({"text": "never"}))
    window = start_window()

    page.get(f"{window.base}/")  # the page holds no secret; without the token it can do nothing
    error = wait_for(page, lambda d: d.find_element(By.ID, "error").text, "an error")
    assert "URL hookgate printed" in error
    assert page.find_elements(By.CSS_SELECTOR, "#open-sessions li") == []
    opened(page, window)  # now the tab holds the token
    page.get(evil_site)
    outcome = page.execute_async_script(
        """const done = arguments[arguments.length - 1];
        fetch(arguments[0] + "/api/sessions", {method: "POST", credentials: "include",
              mode: "no-cors", body: "{}"})
          .then(() => done("sent"), (error) => done(String(error)));""",
        window.base,
    )

    assert outcome == "sent"  # the browser sent it; the window refused it:
    opened(page, window)
    assert len(page.find_elements(By.CSS_SELECTOR, "#open-sessions li")) == 1


@pytest.mark.parametrize(
    ("signals", "code"),
    [
        ((signal.SIGINT, signal.SIGINT), 130),  # a second Ctrl-C changes nothing
        ((signal.SIGTERM,), -signal.SIGTERM),
        ((signal.SIGHUP,), -signal.SIGHUP),  # a closed terminal
    ],
)
def test_a_signal_cancels_a_running_turn_after_its_post_generation_hooks(
    project: Project,
    start_window: Callable[..., Window],
    tmp_path: Path,
    signals: tuple[int, ...],
    code: int,
) -> None:
    log = tmp_path / "post.log"
    project.write_agent(
        project.script({"delay": 60, "text": "too late"}),
        hooks={"postGeneration": [project.recorder(log)]},
    )
    window = start_window()
    session_id = open_session(window)
    with client(window) as http:
        assert ask_over_http(http, session_id, "slow one").status_code == 202
        with http.stream("GET", f"/api/sessions/{session_id}/events") as events:
            next(line for line in events.iter_lines() if '"turn_start"' in line)

        exit_code, err = stop(window, signals)

    assert exit_code == code
    assert "Traceback" not in err
    assert [event["outcome"] for event in read_log(log)] == ["cancelled"]


def test_under_nohup_a_hangup_leaves_the_window_serving(project: Project) -> None:
    """`nohup hookgate window` asks to outlive its terminal: SIGHUP changes nothing, and
    SIGTERM still stops it."""
    project.write_agent(project.script({"text": "still here"}))
    project.trust()
    process = subprocess.Popen(
        ["nohup", str(HOOKGATE), "window", "--no-browser"], cwd=project.dir,
        env=project.env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    window = Window(process.stdout.readline().strip(), process)
    try:
        session_id = open_session(window)  # serving: its signal handlers are in place
        process.send_signal(signal.SIGHUP)
        with client(window) as http:
            assert ask_over_http(http, session_id, "there?").status_code == 202
            with http.stream("GET", f"/api/sessions/{session_id}/events") as events:
                ended = next(line for line in events.iter_lines() if '"turn_end"' in line)
        assert '"outcome": "answered"' in ended
    finally:
        exit_code, err = stop(window, (signal.SIGTERM,))

    assert exit_code == -signal.SIGTERM, err


def test_a_new_session_on_an_agent_file_changed_since_it_was_trusted_is_refused(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    project.write_agent(project.script({"text": "never"}))
    opened(page, start_window())
    project.write_agent(project.script({"text": "never"}), yolo=True)  # not what was trusted

    page.find_element(By.ID, "new-session").click()

    error = wait_for(page, lambda d: d.find_element(By.ID, "error").text, "an error")
    assert "trust" in error
    assert len(page.find_elements(By.CSS_SELECTOR, "#open-sessions li")) == 1
