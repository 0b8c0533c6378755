"""Line mode's looks on a real pseudo-terminal: markdown answers, a style per notice kind.

A terminal emulator (pyte) replays the bytes hookgate wrote, so the tests read the
screen a person sees, bold text and erased lines included; with `NO_COLOR` (or off a
terminal) everything is plain text.
"""

from __future__ import annotations

import io
import itertools
import json

import pyte
from hypothesis import given
from hypothesis import strategies as st

from frontends import test_line
from frontends.test_line import COLUMNS, PROMPT, ROWS, SECRET, Terminal, start
from hookgate.frontends.markdown import FALLBACK_SIZE, MarkdownAnswer
from hookgate.frontends.terminal import STYLES
from hookgate.view import NoticeKind
from runtime.project import Project

terminals = test_line.terminals  # the fixture: each test's terminals, closed after it

COLOUR = {"NO_COLOR": ""}  # an empty NO_COLOR is no request (no-color.org)
ANSWER = "Use **bold** here.\n\n```python\nprint('hi')\n```\n\n- one\n- two\n\nDone."


def screen_of(terminal: Terminal) -> pyte.Screen:
    screen = pyte.Screen(COLUMNS, ROWS)
    pyte.ByteStream(screen).feed(terminal.raw)
    return screen


def assert_drawn_as_markdown(lines: list[str]) -> None:
    """`ANSWER` on the screen as markdown draws it: a bullet list, no markup left."""
    assert any(line.strip() == "• one" for line in lines)
    shown = "\n".join(lines)
    assert "**" not in shown, shown
    assert "```" not in shown, shown


def ask(terminal: Terminal, question: str, last: str) -> None:
    terminal.submit(question)
    terminal.expect(last)
    terminal.expect(PROMPT)


def test_a_markdown_answer_is_rendered_on_a_colour_terminal(
    project: Project, terminals: list[Terminal]
) -> None:
    project.write_agent(project.script({"text": ANSWER}))
    terminal = start(terminals, project, extra_env=COLOUR)

    ask(terminal, "Show me", "Done.")
    terminal.type("\x04")

    assert terminal.wait() == 0
    screen = screen_of(terminal)
    lines = [line.rstrip() for line in screen.display]
    (row,) = [y for y, line in enumerate(lines) if "Use bold here." in line]
    x = lines[row].index("bold")
    assert [screen.buffer[row][x + i].bold for i in range(4)] == [True] * 4
    assert not screen.buffer[row][0].bold
    assert any(line.strip() == "print('hi')" for line in lines)
    assert_drawn_as_markdown(lines)


def test_an_asked_agents_answer_is_rendered_like_the_agents_own(
    project: Project, terminals: list[Terminal]
) -> None:
    """`/ask-<name>`: the other agent's markdown is drawn as the agent's own answers are."""
    helper = project.dir / "helper"
    helper.mkdir()
    (helper / "script.yaml").write_text(json.dumps([{"text": ANSWER}]))
    (helper / "hookgate.yaml").write_text("model: scripted:script.yaml\n")
    project.write_agent(
        project.script({"text": "unused"}),
        agents={"helper": {"file": str(helper / "hookgate.yaml"), "description": "helps"}},
    )
    terminal = start(terminals, project, extra_env=COLOUR)

    ask(terminal, "/ask-helper Show me", "Done.")
    terminal.type("\x04")

    assert terminal.wait() == 0
    lines = [line.rstrip() for line in screen_of(terminal).display]
    assert any("Use bold here." in line for line in lines), lines
    assert_drawn_as_markdown(lines)


def test_no_color_shows_the_answer_and_the_notices_as_plain_text(
    project: Project, terminals: list[Terminal]
) -> None:
    write_every_kind(project)
    terminal = start(terminals, project)  # the tests' environment sets NO_COLOR

    ask(terminal, "Go", "Use **bold** here.")
    ask(terminal, f"use {SECRET}", "Your question was not sent")
    terminal.type("\x04")

    assert terminal.wait() == 0
    raw = terminal.raw.decode()
    assert [kind for kind, style in STYLES.items() if style in raw] == []
    assert "```python\nprint('hi')" in terminal.screen


def write_every_kind(project: Project) -> None:
    """A session whose first turn raises a notice of each kind but BLOCKED, which a
    secret in the second question raises."""
    reply = json.dumps({"result": "scrubbed", "message": "a note from the hook"})
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -rf build"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "missing.txt"}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "echo hi"}}]},
        {"text": ANSWER},
    )
    hooks = {
        "preGeneration": [{"name": "redact", "command": project.example("redact_prompt.py")}],
        "postToolCall": [{"name": "scrub", "matcher": "^shell$",
                          "command": project.hook("scrub", f"cat >/dev/null; echo '{reply}'")}],
        "postGeneration": [{"name": "broken", "command": project.hook("broken", "exit 3")}],
    }  # fmt: skip
    project.write_agent(model, yolo=True, permissions={"deny": ["shell(rm *)"]}, hooks=hooks)


def test_each_kind_of_notice_has_its_own_style(project: Project, terminals: list[Terminal]) -> None:
    write_every_kind(project)
    terminal = start(terminals, project, extra_env=COLOUR)

    ask(terminal, "Go", "Done.")
    ask(terminal, f"use {SECRET}", "Your question was not sent")
    terminal.type("\x04")

    assert terminal.wait() == 0
    raw = terminal.raw.decode()
    seen = [
        (NoticeKind.INFO, "a note from the hook"),
        (NoticeKind.CHANGED, "the result of shell was replaced by a hook"),
        (NoticeKind.DENIED, "✗ shell denied: [denied by the permission rule 'shell(rm *)']"),
        (NoticeKind.BLOCKED, "the question was blocked by hook 'redact'"),
        (NoticeKind.ERROR, "✗ read_file: "),
        (NoticeKind.ERROR, "hook 'broken' (postGeneration) failed"),  # under onError: warn
    ]
    for kind, text in seen:
        start_of_line = raw.rfind("hookgate: ", 0, raw.index(text))
        assert raw[start_of_line - len(STYLES[kind]) : start_of_line] == STYLES[kind], kind
    assert len(set(STYLES.values())) == len(NoticeKind)  # each its own


def final_screen(deltas: list[str], history: int = 0) -> list[str]:
    """The screen after `deltas` streamed through `MarkdownAnswer` (80x24 off a real tty),
    and the `history` lines that scrolled off its top before it."""
    stream = io.StringIO()
    answer = MarkdownAnswer(stream)
    for delta in deltas:
        answer.add(delta)
    answer.finish()
    screen = pyte.HistoryScreen(*FALLBACK_SIZE, history=history + 1)
    pyte.Stream(screen).feed(stream.getvalue().replace("\n", "\r\n"))  # the tty's onlcr
    scrolled = ["".join(line[x].data for x in range(screen.columns)) for line in screen.history.top]
    return [*scrolled, *screen.display]


@given(st.lists(st.integers(1, len(ANSWER + "\r\n")), max_size=12))
def test_a_streamed_answer_ends_as_if_it_had_come_whole(cuts: list[int]) -> None:
    text = ANSWER.replace("here.\n", "here.\r\n")  # a \r and its \n may come apart
    bounds = [0, *sorted(cuts), len(text)]
    deltas = [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]

    assert final_screen(deltas) == final_screen([text])


def test_a_block_taller_than_the_screen_stays_plain_and_whole() -> None:
    lines = [f"line **{n}**" for n in range(40)]
    text = "\n".join(lines) + "\n\nAfter **that**."

    shown = [line.rstrip() for line in final_screen([text[:300], text[300:]], history=40)]

    assert [line for line in shown if line.startswith("line")] == lines
    assert "After that." in shown
