"""The transcript byte for byte as Claude Code writes it, for scripts that grep it.

`claude_transcript.jsonl` holds the conversation lines of a transcript the real Claude
Code CLI wrote: `tests/agent_clis/record_transcript.py` made it (see its docstring).
Each case runs the real `hookgate -p` with the scripted model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hookgate.store.transcript import transcript_path
from runtime.project import Project

CORPUS = Path(__file__).parent / "claude_hooks"
RECORDED = Path(__file__).parent / "claude_transcript.jsonl"


def shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def kind(line: dict[str, Any]) -> str:
    """Which kind of conversation line: a prompt, a tool result, an answer, a call."""
    content = line["message"]["content"]
    if line["type"] == "user":
        return "prompt" if isinstance(content, str) else "tool_result"
    return "call" if any(block["type"] == "tool_use" for block in content) else "answer"


def in_order_within(keys: list[str], recorded: list[str]) -> bool:
    """Every key of `keys` is in `recorded`, in the same order."""
    positions = [recorded.index(key) for key in keys if key in recorded]
    return len(positions) == len(keys) and positions == sorted(positions)


def key_paths(line: dict[str, Any]) -> dict[str, list[str]]:
    """The key order of the line, of its message and of each of its content blocks."""
    message = line["message"]
    paths = {"line": list(line), "message": list(message)}
    if isinstance(message["content"], list):
        for block in message["content"]:
            paths[f"block:{block['type']}"] = list(block)
    return paths


def run_a_call_and_an_answer(project: Project) -> list[str]:
    model = project.script({"tool_calls": [shell("echo hi")]}, {"text": "Done — ok."})
    project.write_agent(model, yolo=True)
    result = project.hookgate("-p", "say hi")
    assert result.returncode == 0, result.stderr
    return lines_of(transcript_path(project.home, project.session_id()))


def test_each_line_is_compact_json_in_claudes_field_order(project: Project) -> None:
    written = run_a_call_and_an_answer(project)

    recorded = {kind(json.loads(text)): json.loads(text) for text in lines_of(RECORDED)}
    parsed = [json.loads(text) for text in written]
    assert [kind(line) for line in parsed] == ["prompt", "call", "tool_result", "answer"]
    for text, line in zip(written, parsed, strict=True):
        assert text == json.dumps(line, ensure_ascii=False, separators=(",", ":"))
        theirs = key_paths(recorded[kind(line)])
        for where, keys in key_paths(line).items():
            assert in_order_within(keys, theirs[where]), (where, keys, theirs[where])
    assert '"role":"assistant"' in written[1]
    assert '"type":"user","message":{"role":"user","content":"say hi"}' in written[0]
    assert "Done — ok." in written[3]  # UTF-8, not \u escapes, as Claude writes it


def test_the_ralph_wiggum_stop_hook_sends_the_agent_back_until_done(project: Project) -> None:
    model = project.script(
        {"text": "Still working."}, {"text": "All fixed. <promise>DONE</promise>"}
    )
    hook = {"format": "claude", "command": str(CORPUS / "ralph-stop.sh")}
    project.write_agent(model, hooks={"Stop": [hook]})

    result = project.hookgate("-p", "fix it")

    assert result.returncode == 0, result.stderr
    assert "no assistant messages" not in result.stderr
    answers = [m["content"] for m in project.messages() if m["role"] == "assistant"]
    assert answers == ["Still working.", "All fixed. <promise>DONE</promise>"]


def recording_hook(log: Path) -> dict[str, Any]:
    return {"type": "command", "command": f"jq -c '{{source}}' >> {log}"}


def test_session_start_matchers_test_the_source_in_agent_and_settings_files(
    project: Project,
) -> None:
    """Claude Code matches SessionStart groups against `source`; so does hookgate."""
    fresh, resumed = project.dir / "fresh.log", project.dir / "resumed.log"
    (project.dir / ".claude").mkdir()
    groups = [{"matcher": "startup|clear|compact", "hooks": [recording_hook(fresh)]}]
    (project.dir / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SessionStart": groups}})
    )
    mine = {"matcher": "^resume$", "format": "claude", **recording_hook(resumed)}
    del mine["type"]
    model = project.script({"text": "One."}, {"text": "Two."})
    project.write_agent(model, claude_settings=True, hooks={"SessionStart": [mine]})
    env = project.env(HOME=str(project.dir.parent))

    first = project.hookgate("-p", "one", env=env)
    assert first.returncode == 0, first.stderr
    again = project.hookgate("-p", "two", "--resume", project.session_id(), env=env)

    assert again.returncode == 0, again.stderr
    assert "never fires" not in first.stderr + again.stderr
    assert fresh.read_text().splitlines() == ['{"source":"startup"}']
    assert resumed.read_text().splitlines() == ['{"source":"resume"}']


def test_a_session_start_hook_exports_through_claude_env_file_to_the_tools(
    project: Project,
) -> None:
    """Claude Code's documented use: under `set -u`, append `export` lines to the file."""
    hook = project.hook(
        "env.sh",
        'set -eu\necho "export GREETING=from-session-start" >> "$CLAUDE_ENV_FILE"\n'
        'test "$CLAUDECODE" = 1',
    )
    model = project.script(
        {"tool_calls": [shell('echo "greeting=${GREETING:-unset}"')]}, {"text": "Done."}
    )
    project.write_agent(
        model, yolo=True, hooks={"SessionStart": [{"format": "claude", "command": hook}]}
    )

    result = project.hookgate("-p", "greet")

    assert result.returncode == 0, result.stderr
    (answer,) = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert "greeting=from-session-start" in answer


def compacting_run(project: Project, hook_body: str) -> tuple[str, list[str]]:
    """`hookgate -p` through four shell calls with a tiny context budget, so the history
    is compacted before the fourth step; a claude-format PreCompact hook runs `hook_body`.
    What the hook logged, and the session's event kinds."""
    log = project.dir / "pre-compact.log"
    calls = [{"tool_calls": [shell(f"echo {n}")]} for n in (1, 2, 3)]
    model = project.script(*calls, {"text": "SUMMARY: three echoes."}, {"text": "Done."})
    hook = project.hook("pre-compact.sh", f"jq -c . >> {log}\n{hook_body}")
    project.write_agent(
        model, yolo=True, context_budget=50,
        hooks={"PreCompact": [{"format": "claude", "matcher": "auto", "command": hook}]},
    )  # fmt: skip
    result = project.hookgate("-p", "echo thrice")
    assert result.returncode == 0, result.stderr
    kinds = [r["kind"] for r in project.records() if r.get("type") == "event"]
    return log.read_text(), kinds


def test_pre_compact_fires_before_a_compaction_with_claudes_payload(project: Project) -> None:
    logged, kinds = compacting_run(project, "exit 0")

    (payload,) = [json.loads(line) for line in logged.splitlines()]
    assert payload["hook_event_name"] == "PreCompact"
    assert (payload["trigger"], payload["custom_instructions"]) == ("auto", "")
    assert "compacted" in kinds


def test_a_pre_compact_block_skips_the_compaction(project: Project) -> None:
    _, kinds = compacting_run(project, "echo 'keep it all' >&2; exit 2")

    assert "compacted" not in kinds
