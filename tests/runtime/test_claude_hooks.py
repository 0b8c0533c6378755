"""Claude Code hooks, unchanged, through the real turn under `format: claude`.

The hooks are in `claude_hooks/` (bash, Python, Node), written as a Claude Code user
writes them; the scripted model plays the model and asks for the calls they judge.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.agent import SessionStopped
from hookgate.runtime.toolcall import NOT_ASKED_RESULT
from hookgate.runtime.turn import Answered, PromptBlocked, TurnFailed, run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView
from runtime.test_consent import RecordingConsent

pytestmark = pytest.mark.anyio
CORPUS = Path(__file__).parent / "claude_hooks"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def claude(name: str, matcher: str | None = None) -> dict[str, Any]:
    hook: dict[str, Any] = {"name": name, "format": "claude", "command": str(CORPUS / name)}
    if matcher is not None:
        hook["matcher"] = matcher
    return hook


def shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def tool_answers(project: Project) -> list[str]:
    return [m["content"] for m in project.messages() if m["role"] == "tool"]


async def test_deny_by_exit_2_and_by_json_with_the_hooks_reasons(
    project: Project, open_project_agent: OpenAgent
) -> None:
    (project.dir / "build").mkdir()
    model = project.script(
        {"tool_calls": [shell("rm -rf build"), shell("curl https://example.com")]},
        {"text": "Done."},
    )
    hooks = [claude("block-rm-rf.sh", "Bash"), claude("deny-curl.py", "Edit|Bash")]
    project.write_agent(model, yolo=True, hooks={"PreToolUse": hooks})
    agent = await open_project_agent()

    assert await run_turn(agent, "clean up", RecordingView()) == Answered("Done.")

    assert tool_answers(project) == [
        "[denied by a hook: rm -rf is not allowed in this repository]",
        "[denied by a hook: no network from the agent: curl https://example.com]",
    ]
    assert (project.dir / "build").is_dir()


async def test_a_matcher_in_claudes_syntax_matches_claudes_tool_names(
    project: Project, open_project_agent: OpenAgent
) -> None:
    (project.dir / "build").mkdir()
    model = project.script({"tool_calls": [shell("rm -rf build")]}, {"text": "Done."})
    hooks = [claude("block-rm-rf.sh", "Read|Write")]  # not Bash: the guard never runs
    project.write_agent(model, yolo=True, hooks={"PreToolUse": hooks})
    agent = await open_project_agent()

    await run_turn(agent, "clean up", RecordingView())

    assert not (project.dir / "build").exists()


@needs_node
async def test_ask_shows_the_prompt_even_under_yolo(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script(
        {"tool_calls": [shell("git push origin main"), shell("echo fine")]}, {"text": "Done."}
    )
    project.write_agent(model, yolo=True, hooks={"PreToolUse": [claude("ask-push.js")]})
    consent = RecordingConsent(allow=False)
    agent = await open_project_agent(consent=consent)

    await run_turn(agent, "push", RecordingView())

    assert [request.tool for request in consent.requests] == ["shell"]
    assert consent.requests[0].arguments == {"command": "git push origin main"}
    assert tool_answers(project)[0] == "[denied by the user]"
    assert tool_answers(project)[1].startswith("fine")


async def test_the_first_hook_to_ask_is_named_with_its_reason_over_an_allow(
    project: Project, open_project_agent: OpenAgent
) -> None:
    def reply(name: str, decision: str, reason: str) -> dict[str, Any]:
        specific = {"hookEventName": "PreToolUse", "permissionDecision": decision,
                    "permissionDecisionReason": reason}  # fmt: skip
        return {"name": name, "format": "claude",
                "command": f"echo '{json.dumps({'hookSpecificOutput': specific})}'"}  # fmt: skip

    hooks = [reply("fine", "allow", "looks fine"), reply("guard", "ask", "pushing needs a human"),
             reply("later", "ask", "me too")]  # fmt: skip
    model = project.script({"tool_calls": [shell("git push")]}, {"text": "Done."})
    project.write_agent(model, hooks={"PreToolUse": hooks})
    consent = RecordingConsent(allow=False)
    agent = await open_project_agent(consent=consent)

    await run_turn(agent, "push", RecordingView())

    (request,) = consent.requests
    assert (request.asked_by, request.asked_why) == ("guard", "pushing needs a human")
    assert request.details().splitlines()[-1] == "  hook 'guard' asks: pushing needs a human"


async def test_allow_skips_consent_and_updated_input_runs_with_context(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script({"tool_calls": [shell("echo one")]}, {"text": "Done."})
    project.write_agent(model, hooks={"PreToolUse": [claude("quiet-tests.py", "Bash")]})
    agent = await open_project_agent()  # consent denies everything, as -p without a tty

    await run_turn(agent, "say one", RecordingView())

    (answer,) = tool_answers(project)
    assert answer.startswith("rewritten")
    assert "pre-context: the command was rewritten" in answer


async def test_allow_never_passes_a_deny_rule(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script({"tool_calls": [shell("echo one")]}, {"text": "Done."})
    project.write_agent(
        model,
        permissions={"deny": ["shell(echo*)"]},
        hooks={"PreToolUse": [claude("quiet-tests.py")]},
    )
    agent = await open_project_agent(consent=RecordingConsent(allow=True))

    await run_turn(agent, "say one", RecordingView())

    assert tool_answers(project) == ["[denied by the permission rule 'shell(echo*)']"]


@needs_node
async def test_legacy_approve_and_block(project: Project, open_project_agent: OpenAgent) -> None:
    model = project.script(
        {"tool_calls": [shell("echo approved"), shell("wget https://example.com")]},
        {"text": "Done."},
    )
    project.write_agent(model, hooks={"PreToolUse": [claude("legacy.js")]})
    agent = await open_project_agent()  # no one to ask: only `approve` lets a call run

    await run_turn(agent, "go", RecordingView())

    approved, blocked = tool_answers(project)
    assert approved.startswith("approved")
    assert blocked == "[denied by a hook: wget is blocked (legacy)]"


async def test_user_prompt_submit_blocks_and_adds_plain_stdout_as_context(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script({"expect": "prompt-context: the project uses tabs", "text": "Ok."})
    project.write_agent(model, hooks={"UserPromptSubmit": [claude("prompt-guard.sh")]})
    agent = await open_project_agent()

    blocked = await run_turn(agent, "my password is hunter2", RecordingView())
    answered = await run_turn(agent, "indent this", RecordingView())

    assert isinstance(blocked, PromptBlocked)
    assert blocked.reason == "the prompt holds a password"
    assert answered == Answered("Ok.")


async def test_post_tool_use_replaces_the_output_and_annotates_it(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script(
        {"tool_calls": [shell("echo AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE")]}, {"text": "Done."}
    )
    project.write_agent(model, yolo=True, hooks={"PostToolUse": [claude("scrub-output.py")]})
    view = RecordingView()
    agent = await open_project_agent()

    await run_turn(agent, "show the key", view)

    (answer,) = tool_answers(project)
    assert "AKIA" not in answer
    assert answer.startswith("AWS_ACCESS_KEY_ID=[redacted]")
    assert "an AWS key was redacted from the output" in answer
    assert "post-context: keys are never shown" in answer
    assert "AKIA" not in json.dumps([call[1].content for call in view.finished])


@needs_node
async def test_stop_block_sends_the_agent_back_once(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script(
        {"text": "Done."}, {"expect": "Run the tests before you finish.", "text": "Tests pass."}
    )
    project.write_agent(model, hooks={"Stop": [claude("run-tests-first.js")]})
    agent = await open_project_agent()

    outcome = await run_turn(agent, "fix it", RecordingView())

    assert outcome == Answered("Tests pass.")
    stops = [json.loads(line) for line in (project.dir / "stops.log").read_text().splitlines()]
    assert [stop["stop_hook_active"] for stop in stops] == [False, True]
    assert [stop["last_assistant_message"] for stop in stops] == ["Done.", "Tests pass."]


async def test_stop_block_goes_on_at_most_eight_times(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script(*({"text": f"answer {i}"} for i in range(9)))
    nag = {"format": "claude", "command": 'echo \'{"decision": "block", "reason": "more"}\''}
    project.write_agent(model, hooks={"Stop": [nag]})
    agent = await open_project_agent()

    assert await run_turn(agent, "go", RecordingView()) == Answered("answer 8")


async def test_continue_false_stops_the_turn_and_post_generation_runs(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    model = project.script(
        {"tool_calls": [shell("echo halt"), shell("echo never")]}, {"text": "never reached"}
    )
    project.write_agent(
        model,
        yolo=True,
        hooks={"PreToolUse": [claude("halt.py")], "postGeneration": [project.recorder(log)]},
    )
    view = RecordingView()
    agent = await open_project_agent()

    outcome = await run_turn(agent, "go", view)

    assert outcome == TurnFailed("stopped by a hook: halted by policy")
    assert tool_answers(project) == [
        "[not run: halted by policy]",
        "[not run: a hook stopped the turn]",
    ]
    assert "the policy halted the agent" in " ".join(view.notices)
    assert json.loads(log.read_text())["outcome"] == "error"


async def test_a_project_settings_file_guards_the_real_turn(
    project: Project, open_project_agent: OpenAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(project.home))  # no ~/.claude of the machine's user
    (project.dir / "build").mkdir()
    (project.dir / ".claude").mkdir()
    group = {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": str(CORPUS / "block-rm-rf.sh")}],
    }
    (project.dir / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [group]}})
    )
    model = project.script({"tool_calls": [shell("rm -rf build")]}, {"text": "Done."})
    project.write_agent(model, yolo=True, claude_settings=True)
    agent = await open_project_agent()

    await run_turn(agent, "clean up", RecordingView())

    assert tool_answers(project) == ["[denied by a hook: rm -rf is not allowed in this repository]"]
    assert (project.dir / "build").is_dir()


async def test_session_start_stdout_reaches_the_first_question_only(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script(
        {"expect": "session-context: on branch main", "text": "One."},
        {"expect": "second", "text": "Two."},
    )
    hook = {"format": "claude", "command": "echo 'session-context: on branch main'"}
    project.write_agent(model, hooks={"SessionStart": [hook]})
    agent = await open_project_agent()

    assert await run_turn(agent, "first", RecordingView()) == Answered("One.")
    assert await run_turn(agent, "second", RecordingView()) == Answered("Two.")
    assert "session-context" not in json.dumps(project.messages())


async def test_ask_without_a_terminal_is_denied_even_under_yolo(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script({"tool_calls": [shell("git push")]}, {"text": "Done."})
    ask = {
        "format": "claude",
        "command": 'echo \'{"hookSpecificOutput": {"permissionDecision": "ask"}}\'',
    }
    project.write_agent(model, yolo=True, hooks={"PreToolUse": [ask]})
    agent = await open_project_agent()  # AlwaysDeny: print mode without a terminal

    await run_turn(agent, "push", RecordingView())

    assert tool_answers(project) == [NOT_ASKED_RESULT]  # no one was asked, no one said no


async def test_continue_false_on_session_start_stops_the_session(
    project: Project, open_project_agent: OpenAgent
) -> None:
    stop = {"format": "claude", "command": 'echo \'{"continue": false, "stopReason": "closed"}\''}
    project.write_agent(project.script({"text": "never"}), hooks={"SessionStart": [stop]})

    with pytest.raises(SessionStopped, match="stopped by a sessionStart hook: closed"):
        await open_project_agent()


def claude_recorder(project: Project, log: Path) -> dict[str, Any]:
    return {**project.recorder(log), "format": "claude"}


@pytest.mark.parametrize(
    ("yolo", "consent", "mode"),
    [
        (False, RecordingConsent(allow=True), "default"),
        (False, None, "dontAsk"),  # no one to ask: -p without a terminal
        (True, RecordingConsent(allow=True), "bypassPermissions"),
    ],
)
async def test_tool_events_carry_the_models_call_id_and_the_permission_mode(
    project: Project,
    open_project_agent: OpenAgent,
    tmp_path: Path,
    yolo: bool,
    consent: RecordingConsent | None,
    mode: str,
) -> None:
    log = tmp_path / "events.log"
    for name in ("a.txt", "b.txt"):
        (project.dir / name).write_text(name)
    reads = [{"name": "read_file", "arguments": {"path": name}} for name in ("a.txt", "b.txt")]
    model = project.script({"tool_calls": reads}, {"text": "Done."})  # no consent needed
    recorder = claude_recorder(project, log)
    project.write_agent(
        model, yolo=yolo, hooks={"PreToolUse": [recorder], "PostToolUse": [recorder]}
    )
    agent = await open_project_agent(**({"consent": consent} if consent else {}))

    await run_turn(agent, "read both", RecordingView())

    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    (asked,) = [m for m in project.messages() if m.get("tool_calls")]
    ids = [call["id"] for call in asked["tool_calls"]]
    assert len(set(ids)) == 2
    # Each call's id in all its events, as a hook pairing PreToolUse with PostToolUse reads
    # it (every call is screened before the first runs, and again right before it runs).
    assert [(e["hook_event_name"], e["tool_use_id"]) for e in events] == [
        ("PreToolUse", ids[0]), ("PreToolUse", ids[1]), ("PostToolUse", ids[0]),
        ("PreToolUse", ids[1]), ("PostToolUse", ids[1]),
    ]  # fmt: skip
    assert {e["permission_mode"] for e in events} == {mode}
    assert not any("agent_id" in e for e in events)  # the top-level agent is nobody's asked agent


async def test_a_hook_that_reads_the_transcript_sees_claudes_tool_calls(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script(
        {"tool_calls": [shell("echo git commit -m fix")]},
        {"tool_calls": [shell("echo pytest -q")]},
        {"tool_calls": [shell("echo git commit -m fix")]},
        {"text": "Committed."},
    )
    hook = claude("tests-before-commit.py", "Bash")
    project.write_agent(model, yolo=True, hooks={"PreToolUse": [hook]})
    agent = await open_project_agent()

    assert await run_turn(agent, "commit the fix", RecordingView()) == Answered("Committed.")

    denied, tested, committed = tool_answers(project)
    assert denied == "[denied by a hook: run the tests (pytest) before committing]"
    assert tested.startswith("pytest -q")
    assert committed.startswith("git commit -m fix")


async def test_additional_context_in_json_on_user_prompt_submit_and_session_start(
    project: Project, open_project_agent: OpenAgent
) -> None:
    model = project.script(
        {"expect": "SessionStart-context: answer in French", "text": "Oui."},
        {"expect": "UserPromptSubmit-context: answer in French", "text": "Encore oui."},
    )
    hook = claude("language-context.sh")
    project.write_agent(model, hooks={"SessionStart": [hook], "UserPromptSubmit": [hook]})
    agent = await open_project_agent()

    assert await run_turn(agent, "first", RecordingView()) == Answered("Oui.")
    assert await run_turn(agent, "second", RecordingView()) == Answered("Encore oui.")
