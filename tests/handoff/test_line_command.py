"""`/ask-<name> question` in line mode: the same delegate, the same hooks, a real child.

The command handler is called as the line loop calls it; the answer streams to stdout
while the history keeps the exchange as postAsk left it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from handoff.conftest import AgentDir, OpenAsker, agents_entry, read_log
from hookgate.frontends.askcommand import parse_ask_command
from hookgate.frontends.line import LineAskDisplay, _ask

pytestmark = pytest.mark.anyio


async def test_ask_command_goes_through_the_hooks_and_is_kept_in_the_history(
    asker: AgentDir,
    asked: AgentDir,
    open_asker: OpenAsker,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pre_log, child_log = tmp_path / "pre.log", tmp_path / "child.log"
    asker.write(
        {"text": "unused"},
        agents=agents_entry(asked),
        hooks={
            "preAsk": [asker.recorder("pre", pre_log, {"question": "Which plan, exactly?"})],
            "postAsk": [asker.recorder("post", tmp_path / "post.log", {"answer": "Plan B."})],
        },
    )
    asked.write(
        {"expect": "Which plan, exactly?", "text": "Plan A, streamed."},
        hooks={"preGeneration": [asked.recorder("own", child_log)]},
    )
    agent = await open_asker(LineAskDisplay())

    handled = await _ask(agent, "/ask-helper What is the plan?")

    assert handled is True
    assert "Plan A, streamed." in capsys.readouterr().out
    assert [entry["question"] for entry in read_log(pre_log)] == ["What is the plan?"]
    assert read_log(child_log)[0]["asked"] == {"depth": 1, "agent": "helper"}
    question, acknowledged = agent.history.messages
    assert question.role == "user"
    assert "Which plan, exactly?" in question.content
    assert "Plan B." in question.content
    assert "Plan A" not in question.content
    assert (acknowledged.role, acknowledged.content) == ("assistant", "Noted.")


async def test_a_refused_ask_command_leaves_the_history_untouched(
    asker: AgentDir, asked: AgentDir, open_asker: OpenAsker, tmp_path: Path
) -> None:
    block = {"action": "block", "reason": "no"}
    asker.write(
        {"text": "unused"},
        agents=agents_entry(asked),
        hooks={"preAsk": [asker.recorder("pre", tmp_path / "pre.log", block)]},
    )
    asked.write({"text": "never"})
    agent = await open_asker(LineAskDisplay())

    handled = await _ask(agent, "/ask-helper my password is hunter2")

    assert handled is False  # the line mode then drops the line from its input history
    assert agent.history.messages == []


async def test_a_question_the_asked_agent_blocked_is_refused_and_kept_nowhere(
    asker: AgentDir, asked: AgentDir, open_asker: OpenAsker, tmp_path: Path
) -> None:
    """The asked agent's own preGeneration hook (the shipped redactor) stops a question
    holding a key: to the asking agent that is a refusal, as a preAsk block is. Its
    history, its model and its postAsk hooks never get the question."""
    secret = "AKIAQWERTYUIOPASDFGH"
    post_log = tmp_path / "post.log"
    asker.write(
        {"text": "unused"},
        agents=agents_entry(asked),
        hooks={"postAsk": [asker.recorder("post", post_log)]},
    )
    redactor = asked.dir / "hooks" / "redact_prompt.py"
    redactor.parent.mkdir(parents=True, exist_ok=True)
    redactor.write_bytes(
        resources.files("hookgate.examples").joinpath("redact_prompt.py").read_bytes()
    )
    asked.write({"text": "never"}, hooks={"preGeneration": [{"args": [str(redactor)]}]})
    agent = await open_asker(LineAskDisplay())

    handled = await _ask(agent, f"/ask-helper deploy with {secret} please")

    assert handled is False  # dropped from the input history too
    assert agent.history.messages == []
    (posted,) = read_log(post_log)
    assert posted["question"].startswith("[prompt blocked by a hook: a hook of the asked agent")
    assert secret not in post_log.read_text()


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("/ask-helper What is it?", ("helper", "What is it?")),
        ("/ask-helper   spaced  ", ("helper", "spaced")),
        ("/ask-helper", ("helper", "")),
        ("/hooks", None),
        ("ask-helper hi", None),
    ],
)
def test_parse_ask_command(line: str, parsed: tuple[str, str] | None) -> None:
    assert parse_ask_command(line) == parsed
