"""`hookgate hooks replay`, run as a user runs it: sessions recorded by the real Claude
Code, Codex and Gemini CLI (fixtures/README.md says how), a session of hookgate itself
and its transcript, all through the example hooks and rules, and the replay mark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policytest.conftest import hookgate
from runtime.project import Project

FIXTURES = Path(__file__).parent / "fixtures"
COMMANDS = ["rm -rf build", "git push --force origin main", "cat creds.txt"]
#: What the example hooks and rules make of the three calls every recording holds.
SUMMARY = {"calls": 3, "now_denied": 1, "now_asking": 0, "rewritten": 1, "results_replaced": 1,
           "prompts": 1, "prompts_now_blocked": 0, "prompts_rewritten": 0}  # fmt: skip


def replayed(examples: Path, *sources: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = hookgate("hooks", "replay", "--agent", "hookgate.yaml", "--json", *sources,
                    cwd=examples, env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def calls(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in result["items"] if item["event"] == "toolCall"]


def assert_the_examples_judged(result: dict[str, Any]) -> None:
    """The three calls as today's example policy decides them, whatever recorded them."""
    found = calls(result)
    assert [c["tool"] for c in found] == ["shell"] * 3
    assert [c["arguments"]["command"] for c in found] == COMMANDS
    denied, pushed, shown = (c["now"] for c in found)
    assert (denied["decision"], denied["by"]) == ("deny", "no-rm-rf")
    assert "rm -rf is not allowed" in denied["reason"]
    assert (pushed["decision"], pushed["by"]) == ("rewrite", "force-with-lease")
    assert pushed["input"] == {"command": "git push --force-with-lease origin main"}
    assert shown["replaced"] is True
    assert "[REDACTED_KEY]" in shown["result"]
    assert "AKIAIOSFODNN7EXAMPLE" not in shown["result"]
    assert result["summary"] == SUMMARY


@pytest.mark.parametrize(
    ("fixture", "agent_tool", "then"),
    [
        ("claude-code.jsonl", "Bash", ["ran", "failed", "ran"]),
        ("codex-rollout.jsonl", "exec_command", ["denied", "failed", "ran"]),
        ("gemini-chat.jsonl", "run_shell_command", ["ran", "ran", "ran"]),
    ],
)
def test_a_recording_of_another_agent_is_judged_by_todays_policy(
    examples: Path, fixture: str, agent_tool: str, then: list[str]
) -> None:
    result = replayed(examples, str(FIXTURES / fixture))
    assert_the_examples_judged(result)
    assert [c["agent_tool"] for c in calls(result)] == [agent_tool] * 3
    assert [c["then"] for c in calls(result)] == then
    (question,) = [item for item in result["items"] if item["event"] == "preGeneration"]
    assert question["prompt"] == "clean up, push my branch and show the credentials file"
    assert question["now"]["decision"] == "allow"


def test_the_report_has_a_line_a_call_and_the_summary(examples: Path) -> None:
    done = hookgate("hooks", "replay", "--agent", "hookgate.yaml",
                    str(FIXTURES / "codex-rollout.jsonl"), cwd=examples)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert 'shell {"command": "rm -rf build"}  denied → now deny (hook \'no-rm-rf\'' in done.stdout
    assert "now rewrite (hook 'force-with-lease')" in done.stdout
    assert "now replace (hook 'scrub-aws')" in done.stdout
    assert done.stdout.rstrip().endswith(
        "3 calls: 1 now denied, 0 now asking, 1 rewritten, 1 results replaced; "
        "1 questions: 0 now blocked, 0 rewritten"
    )


def test_a_hookgate_session_replays_by_id_by_file_and_through_its_transcript(
    project: Project, examples: Path
) -> None:
    (project.dir / "build").mkdir()
    script = project.script(
        *({"tool_calls": [{"name": "shell", "arguments": {"command": c}}]} for c in COMMANDS),
        {"text": "Done."},
    )
    (project.dir / "creds.txt").write_text("KEY=AKIAIOSFODNN7EXAMPLE\n")
    project.write_agent(script, yolo=True, sandbox={"mode": "off"}, tools=["shell"])
    ran = project.hookgate("-p", "clean up, push my branch and show the credentials file")
    assert ran.returncode == 0, ran.stderr
    assert not (project.dir / "build").exists()  # no hook then: it ran
    session = project.session_id()
    env = {"HOOKGATE_HOME": str(project.home)}
    by_id = replayed(examples, session, env=env)
    assert_the_examples_judged(by_id)
    assert [c["then"] for c in calls(by_id)] == ["ran", "ran", "ran"]
    by_file = replayed(examples, str(project.session_files()[0]), env=env)
    assert [c["now"] for c in calls(by_file)] == [c["now"] for c in calls(by_id)]
    (transcript,) = (project.home / "transcripts").glob("*.jsonl")
    through_claude = replayed(examples, str(transcript), env=env)  # Claude Code's shape
    assert through_claude["items"][1]["format"] == "claude-code"
    assert [c["now"]["decision"] for c in calls(through_claude)] == ["deny", "rewrite", "replace"]


@pytest.fixture
def marked(tmp_path: Path) -> Path:
    """An agent file without rules whose hooks log `HOOKGATE_REPLAY` as they see it."""
    directory = tmp_path / "marked"
    directory.mkdir()
    log = directory / "seen.log"
    line = f'echo "$HOOKGATE_EVENT ${{HOOKGATE_REPLAY:-unset}}" >> {log}'
    (directory / "hookgate.yaml").write_text(json.dumps({
        "model": "scripted:none.yaml", "tools": ["shell"], "sandbox": {"mode": "off"},
        "hooks": {event: [{"name": f"log-{event}", "command": line}]
                  for event in ("sessionStart", "preGeneration", "preToolCall", "postGeneration")},
    }))  # fmt: skip
    return directory


def test_every_hook_run_of_a_replay_is_marked_and_all_events_adds_the_rest(marked: Path) -> None:
    source = str(FIXTURES / "gemini-chat.jsonl")
    result = replayed(marked, source)
    log = marked / "seen.log"
    assert log.read_text().splitlines() == ["preGeneration 1"] + ["preToolCall 1"] * 3
    assert result["summary"]["now_asking"] == 3  # no rule allows a shell call here
    log.unlink()
    replayed(marked, "--all-events", source)
    assert log.read_text().splitlines() == [
        "sessionStart 1",
        "preGeneration 1",
        "postGeneration 1",
        *["preToolCall 1"] * 3,
    ]


def test_a_file_replay_cannot_read_is_refused_with_the_formats_it_reads(examples: Path) -> None:
    other = examples / "notes.jsonl"
    other.write_text('{"hello": "world"}\n')
    done = hookgate("hooks", "replay", "--agent", "hookgate.yaml", str(other), cwd=examples)
    assert done.returncode == 1
    assert "not a recording replay reads" in done.stderr
    assert "Codex rollout" in done.stderr
    missing = hookgate("hooks", "replay", "--agent", "hookgate.yaml", "no-such-session",
                       cwd=examples, env={"HOOKGATE_HOME": str(examples / "home")})  # fmt: skip
    assert missing.returncode == 1
    assert "no session 'no-such-session'" in missing.stderr


def test_a_python_hook_can_tell_a_replay_too(tmp_path: Path) -> None:
    (tmp_path / "replay_aware.py").write_text(
        "import os\n\n\ndef guard(event):\n"
        "    if os.environ.get('HOOKGATE_REPLAY') == '1':\n"
        "        return {'action': 'deny', 'reason': 'replayed'}\n"
    )
    (tmp_path / "hookgate.yaml").write_text(json.dumps({
        "model": "scripted:none.yaml", "tools": ["shell"], "sandbox": {"mode": "off"},
        "hooks": {"preToolCall": [{"name": "aware", "python": "replay_aware:guard"}]},
    }))  # fmt: skip
    result = replayed(tmp_path, str(FIXTURES / "gemini-chat.jsonl"))
    assert [c["now"]["reason"] for c in calls(result)] == ["replayed"] * 3


def test_a_question_blocked_then_is_not_replayed_as_its_marker(
    project: Project, examples: Path
) -> None:
    redact = project.example("redact_prompt.py")
    script = project.script({"text": "Listed."})
    project.write_agent(script, tools=["shell"], sandbox={"mode": "off"},
                        hooks={"preGeneration": [{"name": "redact-keys", "command": redact}]})  # fmt: skip
    blocked = project.hookgate("-p", "use sk-demoA1b2C3d4E5f6G7h8I9j0 for me")
    assert "[prompt blocked by a hook:" in json.dumps(project.messages())
    asked = project.hookgate("-p", "what is here?", "--continue")
    assert asked.returncode == 0, asked.stderr + blocked.stderr
    env = {"HOOKGATE_HOME": str(project.home)}
    result = replayed(examples, project.session_id(), env=env)
    prompts = [item["prompt"] for item in result["items"] if item["event"] == "preGeneration"]
    assert prompts == ["what is here?"]
    (transcript,) = (project.home / "transcripts").glob("*.jsonl")
    through_claude = replayed(examples, str(transcript), env=env)
    assert [i["prompt"] for i in through_claude["items"]] == ["what is here?"]
