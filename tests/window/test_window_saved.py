"""The window's Saved list: the sessions of this directory and agent file only."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

from runtime.project import HOOKGATE, RUN_TIMEOUT, Project
from window.conftest import Window
from window.test_window_guard import client


def test_saved_sessions_are_those_of_this_directory_and_agent_file(
    project: Project, start_window: Callable[..., Window]
) -> None:
    model = project.script({"text": "ok"})
    project.write_agent(model)
    other = project.dir / "other.yaml"
    other.write_text(f"model: {model}\n")
    elsewhere = project.dir / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "hookgate.yaml").write_text(f"model: scripted:{project.dir / 'script.yaml'}\n")
    for args in (("-p", "mine"), ("--agent", "other.yaml", "-p", "another agent's")):
        assert project.hookgate(*args).returncode == 0
    project.trust(elsewhere / "hookgate.yaml")
    away = subprocess.run(
        [str(HOOKGATE), "-p", "another directory's"],
        cwd=elsewhere,
        env=project.env(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert away.returncode == 0, away.stderr
    window = start_window()

    with client(window) as http:
        listing = http.get("/api/sessions").json()

    assert [entry["title"] for entry in listing["saved"]] == ["mine"]
