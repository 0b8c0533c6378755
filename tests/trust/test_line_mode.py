"""Line mode on a terminal shows what trusting means and asks, inline, before anything
of the file runs; no means nothing runs and the refusal stands."""

from __future__ import annotations

from pathlib import Path

import pytest

from frontends.test_line import Terminal
from runtime.project import Project


def untrusted_project(project: Project, markers: Path) -> None:
    markers.mkdir()
    start = project.hook("start.sh", f"touch {markers}/sessionStart")
    project.write_agent(
        project.script({"text": "hi"}), hooks={"sessionStart": [{"command": start}]}
    )


@pytest.mark.parametrize(("answer", "code", "ran"), [("y", 0, ["sessionStart"]), ("n", 1, [])])
def test_line_mode_asks_inline(
    project: Project, tmp_path: Path, answer: str, code: int, ran: list[str]
) -> None:
    markers = tmp_path / "markers"
    untrusted_project(project, markers)
    terminal = Terminal(project, trusted=False)
    try:
        terminal.expect("sessionStart: ./hooks/start.sh")
        terminal.expect("Trust it? [y/N]")
        assert list(markers.iterdir()) == []
        terminal.type(f"{answer}\r")
        if code == 0:
            terminal.expect("/help for help")
            terminal.expect("›")
            terminal.type("\x04")  # Ctrl-D
        else:
            terminal.expect("is not trusted")
        assert terminal.wait() == code
    finally:
        terminal.close()
    assert sorted(path.name for path in markers.iterdir()) == ran
