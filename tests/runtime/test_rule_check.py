"""Rules that name no tool are reported, never accepted in silence: `hooks check`
warns (and `--strict` fails), every session says so as it starts, and a rule that does
not parse is a config error naming its file, line and key. Real `hookgate` processes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from runtime.project import Project

UNNAMED = ["Shell(sudo *)", "bash(sudo *)", "Read(secrets/*)"]


def write(project: Project, **settings: Any) -> None:
    project.write_agent(project.script({"text": "hi"}), **settings)


def test_hooks_check_strict_fails_on_a_rule_whose_tool_matches_nothing(project: Project) -> None:
    write(project, permissions={"deny": UNNAMED, "allow": ["shell(ls *)"]})

    strict = project.hookgate("hooks", "check", "--strict")
    lenient = project.hookgate("hooks", "check")

    assert strict.returncode == 1
    assert lenient.returncode == 0
    for index, (rule, meant) in enumerate(zip(UNNAMED, ["shell", "shell", "read_file"],
                                              strict=True)):  # fmt: skip
        assert (
            f"permissions.deny[{index}] {rule!r}: tool {rule.split('(')[0]!r} matches no tool "
            f"this agent offers"
        ) in strict.stderr
        assert f"the rule never applies; did you mean {meant!r}?" in strict.stderr
    assert "shell(ls *)" not in strict.stderr
    assert "3 warnings" in strict.stderr


def test_a_rule_for_a_tool_not_offered_says_how_to_offer_it(project: Project) -> None:
    write(project, tools=["read_file"], permissions={"allow": ["shell(ls *)", "mcp__docs__*"]})
    checked = project.hookgate("hooks", "check")
    assert "list 'shell' under tools: to offer it" in checked.stderr
    # An MCP tool is known only once its server runs (an editor may bring its own).
    assert "mcp__docs__" not in checked.stderr


def test_every_session_start_warns_about_such_a_rule(project: Project) -> None:
    write(project, permissions={"deny": ["Shell(sudo *)"]})
    result = project.hookgate("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "'Shell(sudo *)': tool 'Shell' matches no tool" in result.stderr
    assert "did you mean 'shell'?" in result.stderr


@pytest.mark.parametrize("rule", ["shell(sudo *", "shell)x(", "(sudo *)"])
def test_a_rule_that_does_not_parse_is_a_config_error(project: Project, rule: str) -> None:
    write(project, yolo=True, permissions={"deny": ["shell(rm *)", rule]})

    for result in (project.hookgate("-p", "hi"), project.hookgate("hooks", "check")):
        assert result.returncode == 1
        assert f"permissions.deny[1]: {rule!r} is not a permission rule" in result.stderr
        assert "hint: a rule is a tool name" in result.stderr
        assert "Traceback" not in result.stderr


def test_a_deny_rule_for_a_tool_only_an_asked_agent_offers_is_no_warning(
    project: Project,
) -> None:
    (project.dir / "helper.yaml").write_text(json.dumps({"model": project.script({"text": "hi"}),
                                                         "tools": ["web_fetch"]}))  # fmt: skip
    write(project, agents={"helper": {"file": "helper.yaml"}},
          permissions={"deny": ["web_fetch(*)", "Shell(sudo *)"]})  # fmt: skip

    checked = project.hookgate("hooks", "check")

    # It binds the helper, which offers web_fetch: the rule applies down the chain.
    assert "'web_fetch(*)'" not in checked.stderr
    assert "'Shell(sudo *)': tool 'Shell' matches no tool" in checked.stderr
