"""The Claude Agent SDK adapter: `ClaudeAgentOptions(hooks=hookgate_hooks(...))` through
the SDK's real `query()` and control protocol, a scripted CLI on its transport, and the
test hooks as real processes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

from adapters.claude_cli import Script, ScriptedCLI
from adapters.conftest import Hooked, cancel_when_started
from hookgate.adapters.claude_agent_sdk import (
    REWRITE_BLOCKED,
    CannotRewritePrompt,
    HookgateHooks,
    hookgate_hooks,
)


def hooks_of(hooked: Hooked) -> HookgateHooks:
    with pytest.warns(CannotRewritePrompt):  # said at set-up, every time
        return hookgate_hooks(hooked.file)


def converse(hooked: Hooked, question: str, script: Script) -> tuple[ScriptedCLI, str | None]:
    """Run `question` through `query()`; the CLI and the final result's text."""
    hooks = hooks_of(hooked)
    cli = ScriptedCLI(script, str(hooked.dir))

    async def run() -> str | None:
        answer = None
        async with hooks.guard():
            options = ClaudeAgentOptions(hooks=hooks)  # type: ignore[arg-type]
            async for message in query(prompt=question, options=options, transport=cli):
                if isinstance(message, ResultMessage):
                    answer = message.result
        return answer

    return cli, asyncio.run(run())


def test_a_denied_call_never_runs_and_the_model_reads_why(hooked: Hooked) -> None:
    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            await cli.tool("Bash", {"command": "rm -rf /", "description": "clean"}, _stdout)
            await cli.finish("I will not.")

    cli, answer = converse(hooked, "clean up", script)
    assert cli.ran == []
    [read] = cli.model_read
    assert read.startswith("[denied by a hook: rm -rf is not allowed by this project")
    assert answer == "I will not."
    assert hooked.ends() == [{"prompt": "clean up", "answer": "I will not.", "outcome": "answered"}]


def test_a_rewritten_call_runs_rewritten_and_a_replaced_result_is_what_the_model_reads(
    hooked: Hooked,
) -> None:
    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            await cli.tool("mcp__tools__echo", {"text": "say it lower"}, _echo)
            await cli.tool("mcp__tools__echo", {"text": "the SECRET"}, _echo)
            await cli.finish("ok")

    cli, _ = converse(hooked, "echo twice", script)
    assert cli.ran == [
        ("mcp__tools__echo", {"text": "SAY IT LOWER"}),
        ("mcp__tools__echo", {"text": "the SECRET"}),
    ]
    read = [json.loads(text)["content"][0]["text"] for text in cli.model_read]
    assert read == ["echo: SAY IT LOWER", "[scrubbed by policy]"]


def test_a_guard_that_cannot_run_fails_closed(hooked: Hooked) -> None:
    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            await cli.tool("fragile", {"text": "x"}, _echo)
            await cli.finish("done")

    cli, _ = converse(hooked, "try it", script)
    assert cli.ran == []
    assert cli.model_read[0].startswith("[denied by a hook: hook ")


def test_a_blocked_question_never_reaches_the_model(hooked: Hooked) -> None:
    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            await cli.finish("should never be said")

    _, answer = converse(hooked, "BLOCK me", script)
    assert answer == "blocked: a blocked word"
    assert hooked.ends()[0]["outcome"] == "blocked"
    assert "BLOCK me" not in str(hooked.ends())


def test_a_question_a_hook_rewrites_is_blocked_since_the_sdk_cannot_send_a_rewrite(
    hooked: Hooked,
) -> None:
    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            await cli.finish("should never be said")

    _, answer = converse(hooked, "please rewrite this", script)
    assert answer == f"blocked: {REWRITE_BLOCKED}"


def test_context_a_hook_adds_reaches_the_model_as_additional_context(hooked: Hooked) -> None:
    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            await cli.finish("one line")

    cli, _ = converse(hooked, "answer with context", script)
    [answer] = cli.prompt_answers
    assert answer["hookSpecificOutput"]["additionalContext"] == "House rule: answer in one line."


def test_post_generation_runs_when_the_cli_dies(hooked: Hooked) -> None:
    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            raise ConnectionError("the CLI exited")

    with pytest.raises(Exception, match="the CLI exited"):
        converse(hooked, "hello", script)
    assert hooked.ends() == [{"prompt": "hello", "answer": None, "outcome": "error"}]


def test_every_matcher_that_can_fail_closed_does(hooked: Hooked) -> None:
    hooks = hooks_of(hooked)
    failing = {event: [m.on_failure for m in matchers] for event, matchers in hooks.items()}
    assert failing == {
        "UserPromptSubmit": ["block"],
        "PreToolUse": ["block"],
        "PostToolUse": ["block"],
        "PostToolUseFailure": [None],
        "Stop": [None],  # the SDK ignores on_failure on Stop
        "SubagentStart": [None],
        "SubagentStop": [None],
    }


def _stdout(tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"stdout": f"ran {tool_input['command']}", "stderr": "", "interrupted": False}


def _echo(tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"echo: {tool_input['text']}"}]}


GOLDEN = Path(__file__).resolve().parent / "golden_claude_sdk"


@pytest.mark.parametrize(
    ("case", "question", "calls"),
    [
        ("deny", "clean up", [("Bash", {"command": "rm -rf /", "description": "clean"})]),
        (
            "rewrite_and_replace",
            "echo with context",
            [("mcp__tools__echo", {"text": "lower SECRET"})],
        ),
        ("fail_closed", "try it", [("fragile", {"text": "x"})]),
        ("block", "BLOCK me", []),
    ],
)
def test_the_answers_on_the_wire_match_the_golden_files(
    hooked: Hooked, case: str, question: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            for name, tool_input in calls:
                await cli.tool(name, tool_input, _echo if "echo" in name else _stdout)
            await cli.finish("ok")

    cli, _ = converse(hooked, question, script)
    golden = GOLDEN / f"{case}.json"
    assert cli.answers == json.loads(golden.read_text()), golden


def test_post_generation_runs_when_the_query_is_cancelled(hooked: Hooked) -> None:
    hooks = hooks_of(hooked)
    started = asyncio.Event()

    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            started.set()
            await asyncio.sleep(60)

    async def consume() -> None:
        async with hooks.guard():
            options = ClaudeAgentOptions(hooks=hooks)  # type: ignore[arg-type]
            cli = ScriptedCLI(script, str(hooked.dir))
            async for _ in query(prompt="wait", options=options, transport=cli):
                pass

    asyncio.run(cancel_when_started(consume(), started))
    assert hooked.ends() == [{"prompt": "wait", "answer": None, "outcome": "cancelled"}]


def _asking(question: str, answer: str = "researched") -> Any:
    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            asked = {"subagent_type": "researcher", "prompt": question, "description": "ask"}
            await cli.agent(asked, answer)
            await cli.finish("done")

    return script


def test_an_agent_call_runs_between_pre_ask_and_post_ask_inside_its_tool_call_hooks(
    hooked: Hooked,
) -> None:
    cli, _ = converse(hooked, "find out", _asking("please rewrite it"))
    [(_, sent)] = cli.ran
    assert sent["prompt"] == "rewritten by policy it"
    assert sent["subagent_type"] == "researcher"
    assert hooked.hand_offs() == [
        "preToolCall:ask_agent", "preAsk:researcher", "subagentStart:researcher",
        "subagentStop:researcher", "postAsk:researcher", "postToolCall:ask_agent",
    ]  # fmt: skip


def test_a_refused_agent_call_never_runs_and_the_model_reads_why(hooked: Hooked) -> None:
    cli, _ = converse(hooked, "find out", _asking("the forbidden one"))
    assert cli.ran == []
    assert cli.model_read == ["[hand-off refused: not a question for that agent]\nAsk me."]


def test_context_post_ask_adds_follows_the_agent_answer(hooked: Hooked) -> None:
    cli, _ = converse(hooked, "find out", _asking("tell me", "an answer with context"))
    [read] = cli.model_read
    text = json.loads(read)["content"][0]["text"]
    assert text == "an answer with context\n\n[hook notes]\nChecked by policy."


def test_a_replaced_agent_answer_is_what_the_model_reads(hooked: Hooked) -> None:
    cli, _ = converse(hooked, "find out", _asking("tell me", "the SECRET is out"))
    [read] = cli.model_read
    assert json.loads(read)["content"][0]["text"] == "[answer scrubbed by policy]"


@pytest.mark.parametrize(
    ("case", "question", "answer"),
    [
        ("hand_off_refused", "the forbidden one", "never said"),
        ("hand_off_rewrite_and_replace", "please rewrite the SECRET", "the SECRET is out"),
    ],
)
def test_the_hand_off_answers_on_the_wire_match_the_golden_files(
    hooked: Hooked, case: str, question: str, answer: str
) -> None:
    cli, _ = converse(hooked, "find out", _asking(question, answer))
    golden = GOLDEN / f"{case}.json"
    assert cli.answers == json.loads(golden.read_text()), golden


#: A hand-off's events as the hooks log them, when postAsk follows preAsk.
PAIRED = ["preToolCall:ask_agent", "preAsk:researcher", "postAsk:researcher"]


def _agent_call(
    failure: str | None,
) -> Callable[[ScriptedCLI, str], Awaitable[None]]:
    """An `Agent` call the hooks allow, then a PostToolUseFailure with `failure`, or
    nothing at all (the CLI's own permission check said no) when None."""

    async def script(cli: ScriptedCLI, prompt: str) -> None:
        if await cli.prompt_allowed(prompt):
            asked = {"subagent_type": "researcher", "prompt": "tell me"}
            fields = {"tool_name": "Agent", "tool_input": asked, "tool_use_id": "toolu_1"}
            await cli.hook("PreToolUse", fields)
            if failure is not None:
                await cli.hook("PostToolUseFailure", {**fields, "error": failure})
            await cli.finish("done")

    return script


def test_a_failed_agent_call_still_runs_post_ask_with_its_error(hooked: Hooked) -> None:
    converse(hooked, "find out", _agent_call("the agent crashed"))
    assert hooked.hand_offs() == PAIRED


def test_an_agent_call_allowed_but_never_run_still_gets_its_post_ask(hooked: Hooked) -> None:
    """The CLI may refuse a call after the hooks allowed it (its own permission check),
    or the turn may end first: postAsk then says the hand-off did not run, at the turn's
    end, so every preAsk a log saw has its postAsk."""
    converse(hooked, "find out", _agent_call(None))
    assert hooked.hand_offs() == PAIRED


def test_post_generation_runs_when_the_query_fails_before_its_first_prompt(
    hooked: Hooked,
) -> None:
    from claude_agent_sdk import CLINotFoundError

    hooks = hooks_of(hooked)

    async def run() -> None:
        async with hooks.guard():
            missing = hooked.dir / "no-such-claude"
            options = ClaudeAgentOptions(hooks=hooks, cli_path=missing)  # type: ignore[arg-type]
            async for _ in query(prompt="hello", options=options):
                pass

    with pytest.raises(CLINotFoundError):
        asyncio.run(run())
    assert hooked.ends() == [
        {
            "prompt": "[prompt not checked: the turn ended before preGeneration finished]",
            "answer": None,
            "outcome": "error",
        }
    ]
