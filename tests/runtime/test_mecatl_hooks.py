"""Hooks written for Mecatl, as its contract prints them, through `hookgate -p`.

Under `format: mecatl` a hook reads and matches Mecatl's tool names (`Shell`); one
listed under a Mecatl phase name without `format:` gets a warning at start, and the
reply only Mecatl reads says which format to give it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from runtime.project import Project

EXAMPLES = Path(__file__).parent.parent / "hooks" / "mecatl_examples" / "bash"
KEY = "sk-" + "a1" * 20


def copy_example(project: Project, name: str) -> str:
    (project.dir / "hooks").mkdir(exist_ok=True)
    shutil.copy(EXAMPLES / name, project.dir / "hooks" / name)
    return f"./hooks/{name}"


def test_a_mecatl_hook_matches_and_reads_the_seeds_tool_name(project: Project) -> None:
    log = project.dir / "events.log"
    guard = copy_example(project, "pretooluse-guard.sh")
    calls = [{"name": "shell", "arguments": {"command": f"rm -rf {project.dir / 'victim'}"}}]
    model = project.script({"tool_calls": calls}, {"text": "Done."})
    (project.dir / "victim").mkdir()
    project.write_agent(model, yolo=True, hooks={"PreToolUse": [
        {"matcher": "^Shell$", "command": f"tee {log} | {guard}", "format": "mecatl"},
    ]})  # fmt: skip
    result = project.hookgate("-p", "clean up")
    assert result.returncode == 0, result.stderr
    assert (project.dir / "victim").is_dir()
    assert json.loads(log.read_text())["Tool"] == "Shell"
    (answer,) = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert "blocked: 'rm -rf' is not permitted by policy" in answer


def test_the_seeds_redactor_without_a_format_says_what_to_do(project: Project) -> None:
    redactor = copy_example(project, "prompt-redactor.sh")
    model = project.script({"text": "ok"})
    project.write_agent(model, hooks={"UserPromptSubmit": [{"command": redactor}]})
    result = project.hookgate("-p", f"my key is {KEY}")
    warning = result.stderr.index("listed under 'UserPromptSubmit'")
    assert "add format: mecatl for a Mecatl hook" in result.stderr[warning:]
    assert "unknown reply field 'mutated'" in result.stderr
    assert "give this hook format: mecatl" in result.stderr

    project.write_agent(model, hooks={"UserPromptSubmit": [
        {"command": redactor, "format": "mecatl"},
    ]})  # fmt: skip
    for session in project.session_files():
        session.unlink()
    fixed = project.hookgate("-p", f"my key is {KEY}")
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout.strip() == "ok"
    assert "listed under" not in fixed.stderr
    (question,) = [m["content"] for m in project.messages() if m["role"] == "user"]
    assert KEY not in question
    assert "[REDACTED]" in question
