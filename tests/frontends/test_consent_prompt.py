"""The consent prompt on a real pseudo-terminal: the whole call is shown before the question.

The scripted model plays a hostile model hiding a second command past what a cut
prompt would show; the person at the keyboard answers with real keys.
"""

from __future__ import annotations

import json

from frontends import test_line
from frontends.test_line import PROMPT, Terminal, start
from runtime.project import Project
from support.hostile_calls import HIDING, shell, touch_one_then_one_and_two

terminals = test_line.terminals  # the fixture: each test's terminals, closed after it

#: The question after the call is shown, in any version of the prompt.
QUESTION = "? [y"


def refuse_once(terminal: Terminal, question: str) -> str:
    """Ask `question`, answer no at the consent prompt, quit; what the prompt showed."""
    terminal.submit(question)
    shown = terminal.expect(QUESTION)
    terminal.type("n\r")
    terminal.expect("Done.")
    terminal.expect(PROMPT)
    terminal.type("\x04")
    assert terminal.wait() == 0
    return shown


def test_the_prompt_shows_a_command_hidden_past_a_screenful_of_spaces(
    project: Project, terminals: list[Terminal]
) -> None:
    project.write_agent(project.script({"tool_calls": [shell(HIDING)]}, {"text": "Done."}))
    shown = refuse_once(start(terminals, project), "Run the tests")

    assert HIDING in shown.replace("\n", "")  # every character of it, spaces and all
    assert "2. touch HIDDEN" in shown  # and each command it runs, one a line
    assert not (project.dir / "HIDDEN").exists()


def test_always_allows_that_exact_call_for_the_session_and_nothing_else(
    project: Project, terminals: list[Terminal]
) -> None:
    touch_one_then_one_and_two(project)
    terminal = start(terminals, project)

    terminal.submit("Touch things")
    terminal.expect("touch one")
    terminal.expect(QUESTION)
    terminal.type("a\r")
    terminal.expect("touch two")
    terminal.expect(QUESTION)
    terminal.type("n\r")
    terminal.expect("Done.")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    questions = [line for line in terminal.screen.splitlines() if line.startswith("shell {")]
    assert questions == ['shell {"command": "touch one"}', 'shell {"command": "touch two"}']
    assert (project.dir / "one").exists()
    assert not (project.dir / "two").exists()
    tool_answers = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert tool_answers == ["[no output]", "[no output]", "[denied by the user]"]


def test_a_consent_prompt_fires_notification_with_claudes_payload(
    project: Project, terminals: list[Terminal]
) -> None:
    log = project.dir / "notified.log"
    hook = project.hook("notify.sh", f"jq -c . >> {log}")
    calls = {"tool_calls": [shell("touch one")]}
    project.write_agent(
        project.script(calls, calls, {"text": "Done."}),
        hooks={"Notification": [{"format": "claude", "matcher": "permission_prompt",
                                 "command": hook}]},
    )  # fmt: skip
    terminal = start(terminals, project)

    terminal.submit("Touch it twice")
    terminal.expect(QUESTION)
    terminal.type("a\r")  # always: the second, identical call asks no one
    terminal.expect("Done.")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    (payload,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert payload["hook_event_name"] == "Notification"
    assert payload["notification_type"] == "permission_prompt"
    assert payload["message"] == "hookgate needs your permission to use shell"


def test_ctrl_c_at_the_consent_prompt_cancels_the_turn(
    project: Project, terminals: list[Terminal]
) -> None:
    """docs/runtime.md: Ctrl-C cancels the turn; at the prompt it is no "no" the model
    reads and acts on with another step."""
    project.write_agent(project.script(
        {"tool_calls": [shell("touch one")]}, {"text": "Went on after the no."},
        {"text": "Next question answered."},
    ))  # fmt: skip
    terminal = start(terminals, project)

    terminal.submit("Touch it")
    terminal.expect(QUESTION)
    terminal.type("\x03")
    shown = terminal.expect("turn cancelled")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    assert "Went on after the no." not in shown
    assert not (project.dir / "one").exists()
    answers = [m["content"] for m in project.messages() if m["role"] == "assistant"]
    assert "Went on after the no." not in answers


def test_the_prompt_names_the_hook_that_asks_and_its_reason(
    project: Project, terminals: list[Terminal]
) -> None:
    """A Claude-format `ask` with `permissionDecisionReason`: Claude Code shows the reason
    to the user; so does the prompt, with the hook's name."""
    specific = {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                "permissionDecisionReason": "pushing needs a human"}  # fmt: skip
    reply = json.dumps({"hookSpecificOutput": specific})
    hook = {"name": "push-guard", "format": "claude", "command": f"echo '{reply}'"}
    project.write_agent(
        project.script({"tool_calls": [shell("echo pushed")]}, {"text": "Done."}),
        yolo=True,
        hooks={"PreToolUse": [hook]},
    )
    shown = refuse_once(start(terminals, project), "Push it")

    assert "hook 'push-guard' asks: pushing needs a human" in shown
