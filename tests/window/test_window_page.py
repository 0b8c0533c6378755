"""The window in a real browser: what a user types, sees, opens, answers and cancels."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement

from runtime.project import Project, read_log
from window.conftest import Window, click, wait_for

#: Set it to a path to keep the screenshot the tool-call test makes (docs/window.png).
SCREENSHOT_ENV = "HOOKGATE_WINDOW_SCREENSHOT"


def opened(page: WebDriver, window: Window) -> WebDriver:
    """The page, loaded through the URL with the token, its session ready."""
    page.get(window.url)
    wait_for(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#open-sessions li"), "a session")
    return page


def ask(page: WebDriver, question: str) -> None:
    box = page.find_element(By.ID, "question")
    box.send_keys(question)
    box.send_keys(Keys.ENTER)


def turn_ended(page: WebDriver, outcome: str) -> None:
    wait_for(
        page,
        lambda d: (
            d.find_element(By.TAG_NAME, "body").get_attribute("data-outcome") == outcome
            and d.find_element(By.TAG_NAME, "body").get_attribute("data-turn") == "idle"
        ),
        f"the turn ending {outcome}",
    )


def tool_row(page: WebDriver, index: int = 0) -> WebElement:
    rows = wait_for(
        page, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool")[index:], "a tool call"
    )
    return rows[0]  # type: ignore[no-any-return]


def test_a_question_streams_back_as_rendered_markdown_with_highlighted_code(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    model = project.script({"text": "Hello **world**\n\n```python\nprint('hi')\n```\n<b>raw</b>"})
    project.write_agent(model, hooks={"preGeneration": [{"name": "audit", "command": "true"}]})
    opened(page, start_window())

    ask(page, "Say hello")
    turn_ended(page, "answered")

    answer = page.find_element(By.CSS_SELECTOR, ".answer")
    assert answer.find_element(By.TAG_NAME, "strong").text == "world"
    assert answer.find_elements(By.CSS_SELECTOR, "pre code span.nb"), "the code is not highlighted"
    assert "<b>raw</b>" in answer.text  # the model's HTML is shown, never obeyed
    assert page.find_element(By.CSS_SELECTOR, ".question").text == "Say hello"
    hooks = page.find_element(By.ID, "hooks").text
    assert "preGeneration 1. audit (onError" in hooks


def test_shift_enter_adds_a_line_and_enter_sends(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    project.write_agent(project.script({"expect": "two", "text": "got both lines"}))
    opened(page, start_window())

    box = page.find_element(By.ID, "question")
    box.send_keys("line one", Keys.SHIFT, Keys.ENTER, Keys.SHIFT, "line two", Keys.ENTER)
    turn_ended(page, "answered")

    assert page.find_element(By.CSS_SELECTOR, ".question").text == "line one\nline two"
    assert "got both lines" in page.find_element(By.CSS_SELECTOR, ".answer").text


def test_a_tool_call_opens_on_click_to_show_its_arguments_and_result(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    (project.dir / "notes.txt").write_text("TODO: water the plants\n")
    model = project.script(
        {
            "text": "Let me look.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
        },
        {"expect": "plants", "text": "The notes say: **water the plants**."},
    )
    project.write_agent(model)
    opened(page, start_window())

    ask(page, "What do my notes say?")
    turn_ended(page, "answered")
    row = tool_row(page)
    result = row.find_element(By.CSS_SELECTOR, ".tool-result")
    assert not result.is_displayed()
    row.find_element(By.TAG_NAME, "summary").click()

    assert result.is_displayed()
    assert "TODO: water the plants" in result.text
    assert '"path": "notes.txt"' in row.find_element(By.CSS_SELECTOR, ".tool-args").text


def test_the_consent_dialog_shows_the_whole_call_and_its_answer_decides(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    long_text = "x" * 300 + " the end"
    model = project.script(
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "a.txt", "content": long_text}}
            ]
        },
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "no"}}]},
        {"expect": "denied by the user", "text": "One written, one refused."},
    )
    project.write_agent(model)
    opened(page, start_window())

    ask(page, "Write two files")
    dialog = wait_for(page, lambda d: d.find_element(By.ID, "consent").is_displayed() and
                      d.find_element(By.ID, "consent"), "the consent dialog")  # fmt: skip
    assert long_text in dialog.find_element(By.ID, "consent-details").text  # uncut
    dialog.find_element(By.ID, "consent-once").click()
    wait_for(page, lambda d: "b.txt" in d.find_element(By.ID, "consent-details").text,
             "the second consent request")  # fmt: skip
    page.find_element(By.ID, "consent-deny").click()
    turn_ended(page, "answered")

    assert (project.dir / "a.txt").read_text() == long_text
    assert not (project.dir / "b.txt").exists()
    assert not page.find_element(By.ID, "consent").is_displayed()
    mark = tool_row(page, 1).find_element(By.CSS_SELECTOR, ".mark-denied")
    assert mark.text == "denied by user: consent was refused"


def test_always_allows_the_same_call_again_without_asking(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    call = {"name": "write_file", "arguments": {"path": "log.txt", "content": "again"}}
    model = project.script({"tool_calls": [call]}, {"tool_calls": [call]}, {"text": "twice"})
    project.write_agent(model)
    opened(page, start_window())

    ask(page, "Write it twice")
    click(page, "//button[@id='consent-always']", "the consent dialog")
    turn_ended(page, "answered")  # a second dialog would have held the turn up

    assert (project.dir / "log.txt").read_text() == "again"
    assert len(page.find_elements(By.CSS_SELECTOR, ".tool")) == 2
    assert page.find_elements(By.CSS_SELECTOR, ".mark") == []


def test_a_denied_call_and_a_blocked_question_are_marked_with_the_hook_and_reason(
    project: Project, start_window: Callable[..., Window], page: WebDriver, tmp_path: Path
) -> None:
    deny = project.hook("no-rm.sh", """echo '{"action": "deny", "reason": "rm is not allowed"}'""")
    block = project.hook(
        "no-secrets.sh",
        """grep -q password && echo '{"action": "block", "reason": "it holds a password",
        "message": "Ask without the **password**."}' || true""",
    )
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -rf build"}}]},
        {"expect": "rm is not allowed", "text": "I may not remove it."},
    )
    project.write_agent(model, hooks={
        "preToolCall": [{"name": "no-rm", "matcher": "^shell$", "command": deny}],
        "preGeneration": [{"name": "no-secrets", "command": block}],
    })  # fmt: skip
    opened(page, start_window())

    ask(page, "Remove the build directory")
    turn_ended(page, "answered")
    mark = tool_row(page).find_element(By.CSS_SELECTOR, ".mark-denied")
    assert mark.text == "denied by no-rm: rm is not allowed"

    ask(page, "my password is hunter2")
    turn_ended(page, "blocked")
    blocked = page.find_element(By.CSS_SELECTOR, ".blocked")
    marker = blocked.find_element(By.CSS_SELECTOR, ".blocked-marker").text
    assert marker == "blocked by a hook: it holds a password"
    response = blocked.find_element(By.CSS_SELECTOR, ".blocked-response")
    assert response.find_element(By.TAG_NAME, "strong").text == "password"
    notices = page.find_elements(By.CSS_SELECTOR, ".notice-blocked")
    assert any("no-secrets" in notice.text for notice in notices)
    questions = [q.text for q in page.find_elements(By.CSS_SELECTOR, ".question")]
    assert questions[-1] == "my password is hunter2"  # what was typed, on this page

    tool_row(page).find_element(By.TAG_NAME, "summary").click()
    shot = Path(os.environ.get(SCREENSHOT_ENV) or tmp_path / "window.png")
    assert page.save_screenshot(str(shot))  # docs/window.png, with the variable set
    assert shot.read_bytes().startswith(b"\x89PNG")

    page.refresh()  # the session's log kept the marker, as the history does
    wait_for(page, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".question")) == 2, "replay")
    replayed = page.find_elements(By.CSS_SELECTOR, ".question")[-1].text
    assert replayed == "[prompt blocked by a hook: it holds a password]"


def test_esc_cancels_a_slow_turn_and_its_post_generation_hooks_still_run(
    project: Project, start_window: Callable[..., Window], page: WebDriver, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    project.write_agent(
        project.script({"delay": 60, "text": "too late"}),
        hooks={"postGeneration": [project.recorder(log)]},
    )
    opened(page, start_window())

    ask(page, "Take your time")
    wait_for(page, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-turn")
             == "running", "the turn running")  # fmt: skip
    ActionChains(page).send_keys(Keys.ESCAPE).perform()
    turn_ended(page, "cancelled")

    (event,) = read_log(log)
    assert event["outcome"] == "cancelled"
    assert event["prompt"] == "Take your time"
    notices = [n.text for n in page.find_elements(By.CSS_SELECTOR, ".notice")]
    assert "turn cancelled" in notices


def test_the_cancel_button_cancels_too(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    project.write_agent(project.script({"delay": 60, "text": "too late"}, {"text": "next"}))
    opened(page, start_window())

    ask(page, "Take your time")
    cancel = wait_for(page, lambda d: d.find_element(By.ID, "cancel").is_enabled() and
                      d.find_element(By.ID, "cancel"), "the cancel button enabled")  # fmt: skip
    cancel.click()
    turn_ended(page, "cancelled")
    ask(page, "again")
    turn_ended(page, "answered")


def test_rewritten_arguments_and_a_replaced_result_are_marked_with_the_hook(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    (project.dir / "public.txt").write_text("public notes\n")
    (project.dir / "secret.txt").write_text("the secret\n")
    to_public = project.hook("to-public.sh", """echo '{"arguments": {"path": "public.txt"}}'""")
    scrub = project.hook("scrub.sh", """echo '{"result": "[scrubbed]"}'""")
    model = project.script(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "secret.txt"}}]},
        {"tool_calls": [{"name": "list_files", "arguments": {}}]},
        {"text": "done"},
    )
    project.write_agent(model, hooks={
        "preToolCall": [{"name": "to-public", "matcher": "^read_file$", "command": to_public}],
        "postToolCall": [{"name": "scrub", "matcher": "^list_files$", "command": scrub}],
    })  # fmt: skip
    opened(page, start_window())

    ask(page, "Read the secret, then list the files")
    turn_ended(page, "answered")

    read = tool_row(page, 0)
    marked = read.find_element(By.CSS_SELECTOR, ".mark-rewritten").text
    assert marked == 'rewritten by to-public: runs read_file {"path": "public.txt"}'  # what runs
    assert "public notes" in read.find_element(By.CSS_SELECTOR, ".tool-result").get_attribute(
        "textContent"
    )
    listing = tool_row(page, 1)
    assert listing.find_element(By.CSS_SELECTOR, ".mark-replaced").text == "replaced by scrub"
    result = listing.find_element(By.CSS_SELECTOR, ".tool-result").get_attribute("textContent")
    assert result == "[scrubbed]"
    assert page.find_elements(By.CSS_SELECTOR, ".notice-changed")
