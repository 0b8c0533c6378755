"""A call a hook rewrote, as the terminal shows it: the command that runs and the hook
that changed it, in `-p -v` and in line mode; every call line in the consent prompt's
JSON form, never a Python repr."""

from __future__ import annotations

from typing import Any

from frontends import test_line
from frontends.test_line import PROMPT, Terminal, start
from runtime.project import Project

terminals = test_line.terminals  # the fixture: each test's terminals, closed after it

REWRITE = (
    "jq -c '{arguments: {command: \"echo rewritten-by-hook; ls\"}}'"  # the whole command replaced
)
RUNS = 'runs shell {"command": "echo rewritten-by-hook; ls"}'


def rewriting_agent(project: Project) -> None:
    calls: dict[str, Any] = {
        "tool_calls": [{"name": "shell", "arguments": {"command": "echo model-asked"}}]
    }
    hook = {"name": "tag-notes", "matcher": "^shell$", "command": project.hook("tag.sh", REWRITE)}
    project.write_agent(
        project.script(calls, {"text": "Done."}), yolo=True, hooks={"preToolCall": [hook]}
    )


def test_print_mode_verbose_shows_what_runs_and_which_hook_rewrote_it(project: Project) -> None:
    rewriting_agent(project)

    result = project.hookgate("-p", "run it", "-v")

    assert result.returncode == 0, result.stderr
    assert f"↻ shell rewritten by hook 'tag-notes': {RUNS}" in result.stderr
    assert 'tool shell {"command": "echo model-asked"}' in result.stderr  # JSON, as consent
    assert "{'command'" not in result.stderr


def test_line_mode_shows_what_runs_and_which_hook_rewrote_it(
    project: Project, terminals: list[Terminal]
) -> None:
    rewriting_agent(project)
    terminal = start(terminals, project)

    terminal.submit("run it")
    shown = terminal.expect("Done.")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    assert '→ shell {"command": "echo model-asked"}' in shown
    assert f"↻ shell rewritten by hook 'tag-notes': {RUNS}" in " ".join(shown.split())
