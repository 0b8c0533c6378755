"""Approve once in the window: a guardrail's block is a consent dialog with "allow once,
past the guardrail" and "reject"; allowing lets that call through once, and the next
identical call is judged again. Driven over HTTP and in a real browser."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from runtime.project import Project
from support.guarded import guarded_twice
from window.conftest import Window, click, wait_for
from window.test_window_events import VOLATILE, turn_events
from window.test_window_guard import client, open_session
from window.test_window_page import ask, opened, turn_ended

GOLDEN = Path(__file__).with_name("golden") / "guardrail_consent.json"


def guarded_window(project: Project, start_window: Callable[..., Window]) -> tuple[Window, str]:
    """A window on `guarded_twice`'s project, and its session's id."""
    guarded_twice(project)
    window = start_window()
    return window, open_session(window)


def test_allow_once_lets_one_identical_call_past_the_guardrail(
    project: Project, start_window: Callable[..., Window]
) -> None:
    window, session_id = guarded_window(project, start_window)

    with client(window) as http:
        first = turn_events(http, session_id, "make the file")
        assert (project.dir / "once.txt").exists()
        (project.dir / "once.txt").unlink()
        second = turn_events(http, session_id, "again", first[-1]["seq"], answer="reject_once")

    assert not (project.dir / "once.txt").exists()  # judged again, and rejected
    asked = [e for e in first + second if e["type"] == "consent"]
    assert [e["guardrail"] for e in asked] == [{"rule": "shell", "reason": "it touches a file"}] * 2
    notices = [e["text"] for e in first + second if e["type"] == "notice"]
    assert any("passes guardrail 'shell' this once" in text for text in notices)
    assert any("guardrail 'shell' blocked the shell call: it touches a file" in text
               for text in notices)  # fmt: skip
    events = [r["data"] for r in project.records() if r.get("kind") == "guardrail_approved"]
    assert [(e["rule"], e["via"]) for e in events] == [("shell", "permission request")]
    actual = [{k: v for k, v in asked[0].items() if k not in VOLATILE}]
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    assert actual == json.loads(GOLDEN.read_text())


def test_always_is_no_answer_to_a_guardrail(
    project: Project, start_window: Callable[..., Window]
) -> None:
    """ "Always allow" is consent's, not a guardrail's: sent anyway, it lets nothing by."""
    window, session_id = guarded_window(project, start_window)

    with client(window) as http:
        turn_events(http, session_id, "make the file", answer="allow_always")

    assert not (project.dir / "once.txt").exists()
    assert not [r for r in project.records() if r.get("kind") == "guardrail_approved"]


def test_the_page_asks_past_a_guardrail_once_and_without_always(
    project: Project, start_window: Callable[..., Window], page: WebDriver
) -> None:
    guarded_twice(project)
    opened(page, start_window())

    ask(page, "make the file")
    dialog: Any = wait_for(page, lambda d: d.find_element(By.ID, "consent").is_displayed() and
                           d.find_element(By.ID, "consent"), "the guardrail dialog")  # fmt: skip
    assert dialog.find_element(By.ID, "consent-title").text == "Guardrail 'shell' blocked this call"
    assert "it touches a file" in dialog.find_element(By.ID, "consent-details").text
    assert not dialog.find_element(By.ID, "consent-always").is_displayed()
    assert dialog.find_element(By.ID, "consent-once").text == "Allow once, past the guardrail"
    click(page, "//button[@id='consent-once']", "allow once")
    turn_ended(page, "answered")

    assert (project.dir / "once.txt").exists()
