"""Claude Code's `permissions` under `claude_settings: true`, through `hookgate -p`.

A Claude Code user's rules live in `.claude/settings.json`: each deny, ask and allow
rule holds here as the same rule in hookgate's grammar, the scripted model plays a
model that tries what they forbid, and a rule that cannot be mapped stops the run.
`$HOME` is a scratch folder, so `~/.claude/settings.json` is the test's own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks.claude.permissions import UnmappableRule, map_claude_rule
from hookgate.runtime.toolcall import NOT_ASKED_RESULT
from runtime.project import Project
from support.web_server import Page, WebServer

HOME = Path("/home/someone")


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def claude_settings(project: Project, name: str = "settings.json", **permissions: Any) -> Path:
    path = project.dir / ".claude" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"permissions": permissions}, indent=2))
    return path


def run_print_mode(
    project: Project, calls: list[dict[str, Any]], **settings: Any
) -> tuple[list[str], str]:
    """`hookgate -p` with one reply making `calls`; the tools' answers and stderr."""
    model = project.script({"tool_calls": calls}, {"text": "Done."})
    project.write_agent(model, claude_settings=True, **settings)
    result = project.hookgate("-p", "go", env=project.env(HOME=str(project.dir.parent)))
    assert result.returncode == 0, result.stderr
    return [m["content"] for m in project.messages() if m["role"] == "tool"], result.stderr


def test_the_settings_files_deny_rules_hold(project: Project) -> None:
    (project.dir / "secrets").mkdir()
    (project.dir / "secrets" / "key.txt").write_text("s3cret")
    claude_settings(project, deny=["Bash(curl:*)", "Read(./secrets/**)"])
    with WebServer({"/x": Page("exfiltrated", "text/plain")}) as server:
        answers, _ = run_print_mode(
            project,
            [call("shell", command=f"curl -s {server.url('/x')}"),
             call("read_file", path="secrets/key.txt")],
            yolo=True,
        )  # fmt: skip
        assert server.requests == []
    assert answers == [
        "[denied by the permission rule 'shell(curl *)']",
        "[denied by the permission rule 'read_file(secrets/**)']",
    ]


def test_the_settings_files_allow_rules_and_folders_hold(project: Project) -> None:
    shared = project.dir.parent / "shared"
    shared.mkdir()
    (shared / "lib.txt").write_text("common code")
    (project.dir / "notes").mkdir()
    claude_settings(project, allow=["Bash(ls:*)", "Edit(notes/**)"],
                    additionalDirectories=["../shared"])  # fmt: skip
    claude_settings(project, "settings.local.json", allow=["Bash(touch made)"])
    answers, _ = run_print_mode(project, [
        call("shell", command="ls -a notes"), call("write_file", path="notes/a.txt", content="x"),
        call("read_file", path="../shared/lib.txt"), call("shell", command="touch made"),
        call("shell", command="touch other"),
    ])  # fmt: skip
    assert answers[1:4] == ["created notes/a.txt (1 bytes)", "common code", "[no output]"]
    assert answers[0].startswith(".\n..")
    assert answers[4] == NOT_ASKED_RESULT  # no rule allows it: -p has no one to ask
    assert (project.dir / "made").exists()
    assert not (project.dir / "other").exists()


def test_an_ask_rule_asks_even_under_yolo_and_an_allow_rule(project: Project) -> None:
    claude_settings(project, ask=["Bash(touch:*)"], allow=["Bash(touch *)"])
    answers, stderr = run_print_mode(
        project, [call("shell", command="touch asked"), call("write_file", path="w", content="")],
        yolo=True, permissions={"ask": ["write_file(w)"]},
    )  # fmt: skip
    assert answers == [NOT_ASKED_RESULT, NOT_ASKED_RESULT]
    assert "the ask rule 'shell(touch *)' asks for consent" in stderr
    assert "the ask rule 'write_file(w)' asks for consent" in stderr
    assert not (project.dir / "asked").exists()
    assert not (project.dir / "w").exists()


def test_web_fetch_rules_judge_the_host(project: Project) -> None:
    claude_settings(project, deny=["WebFetch(domain:localhost)"],
                    allow=["WebFetch(domain:127.0.0.1)"])  # fmt: skip
    with WebServer({"/p": Page("public page", "text/plain")}) as server:
        answers, _ = run_print_mode(
            project,
            [call("web_fetch", url=server.url("/p", host="localhost")),
             call("web_fetch", url=server.url("/p"))],
            tools=["web_fetch"], web_fetch={"allow_private": True},
        )  # fmt: skip
        assert len(server.requests) == 1
    assert answers[0] == "[denied by the permission rule 'web_fetch(domain:localhost)']"
    assert "public page" in answers[1]


@pytest.mark.parametrize(
    ("rule", "where"),
    [("NotebookEdit", "permissions.deny[1]"), ("WebFetch(https://x.example/)", "permissions.deny[1]"),
     ("Grep(secret)", "permissions.deny[1]"), ("Bash(rm", "permissions.deny[1]")],
)  # fmt: skip
def test_a_rule_that_cannot_be_mapped_stops_the_run_naming_it(
    project: Project, rule: str, where: str
) -> None:
    path = claude_settings(project, deny=["Bash(sudo:*)", rule])
    model = project.script({"text": "never"})
    project.write_agent(model, claude_settings=True, yolo=True)
    result = project.hookgate("-p", "go", env=project.env(HOME=str(project.dir.parent)))
    assert result.returncode == 1
    assert f"{path}:" in result.stderr
    assert where in result.stderr
    assert f"Claude Code's deny rule {rule!r} cannot be mapped" in result.stderr
    assert "never dropped" in result.stderr
    assert "never" not in result.stdout


@pytest.mark.parametrize(
    ("rule", "mapped"),
    [("Bash", ("shell",)), ("Bash(curl:*)", ("shell(curl)", "shell(curl *)")),
     ("Bash(npm run test:*)", ("shell(npm run test)", "shell(npm run test *)")),
     ("Bash(git log *)", ("shell(git log *)",)), ("Bash(ls [a]?)", ("shell(ls [[]a][?])",)),
     ("Read", ("read_file", "grep", "list_files")), ("Read(./secrets/**)", ("read_file(secrets/**)",)),
     ("Read(secrets/)", ("read_file(secrets/**)",)), ("Read(//etc/**)", ("read_file(/etc/**)",)),
     ("Read(~/.ssh/*)", ("read_file(/home/someone/.ssh/*)",)),
     ("Edit(/src/**)", ("edit_file(src/**)", "write_file(src/**)")), ("Edit", ("edit_file", "write_file")),
     ("Write(out.txt)", ("write_file(out.txt)",)), ("Glob", ("list_files",)), ("Grep", ("grep",)),
     ("WebFetch", ("web_fetch",)), ("WebFetch(domain:Docs.Example.com)", ("web_fetch(domain:docs.example.com)",)),
     ("WebSearch", ("web_search",)), ("mcp__github", ("mcp__github__*",)),
     ("mcp__github__get_issue", ("mcp__github__get_issue",)), ("mcp__github__*", ("mcp__github__*",)),
     ("Agent(Explore)", ("ask_agent(Explore)",)), ("Task", ("ask_agent",))],
)  # fmt: skip
def test_claude_rules_map_to_hookgates(rule: str, mapped: tuple[str, ...]) -> None:
    assert map_claude_rule(rule, HOME) == mapped


@pytest.mark.parametrize(
    "rule", ["NotebookEdit", "Bash()", "mcp__x__y(z)", "Read(", "WebSearch(q)"]
)
def test_what_hookgate_has_no_rule_for_is_refused(rule: str) -> None:
    with pytest.raises(UnmappableRule):
        map_claude_rule(rule, HOME)
