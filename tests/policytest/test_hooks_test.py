"""`hookgate hooks test`, run as a user runs it: the shipped cases over the example hooks,
a guard broken by one line, JUnit, `--update`, and mistakes in a test file."""

from __future__ import annotations

import json
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from policytest.conftest import hookgate

#: A claude-format hook that asks for consent on any `curl` (Claude's permissionDecision).
ASK_ON_CURL = """\
#!/bin/sh
if jq -e '.tool_input.command | test("curl")' >/dev/null; then
  echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}'
fi
"""

#: The guard's line that recognises `find`: changed, `find -delete` passes the guard.
FIND_LINE = 'if ($i == "find") find = 1'


def test_the_shipped_cases_pass(examples: Path) -> None:
    done = hookgate("hooks", "test", "--agent", "hookgate.yaml", cwd=examples)
    assert done.returncode == 0, done.stdout + done.stderr
    passed = [line for line in done.stdout.splitlines() if line.startswith("  ok    ")]
    assert len(passed) >= 20
    assert re.search(r"^(\d+) cases: \1 passed, 0 failed$", done.stdout, re.M), done.stdout
    decisions = {line.split("→ ")[1].split(" ")[0] for line in passed}
    assert decisions == {"allow", "ask", "deny", "rewrite", "replace", "block"}
    # Allowed, yet nothing ran but the hooks: the tools were stand-ins.
    assert "  ok    writing docs is allowed by a rule  → allow" in done.stdout
    assert not (examples / "docs").exists()


def test_a_one_line_change_to_the_guard_fails_naming_the_case_and_the_hook(
    examples: Path,
) -> None:
    guard = examples / "guard-rm-rf.sh"
    text = guard.read_text()
    assert text.count(FIND_LINE) == 1
    guard.write_text(text.replace(FIND_LINE, FIND_LINE.replace('"find"', '"fnd"')))
    done = hookgate("hooks", "test", "--agent", "hookgate.yaml", cwd=examples)
    assert done.returncode == 1, done.stdout + done.stderr
    failing = done.stdout.split("  FAIL  find -delete is refused  (policy.hooktest.yaml:")[1]
    diff = failing.split("\n  ok")[0]
    assert "- decision: deny\n" in diff
    assert "+ decision: ask\n" in diff
    assert "- by: no-rm-rf\n" in diff  # the hook that no longer decides
    assert "+ by: permissions\n" in diff  # and what decided instead
    assert "decided by: permissions: no permissions.allow rule covers this shell call" in diff
    assert done.stdout.count("  FAIL  ") == 1  # the other rm cases still pass
    assert re.search(r"^\d+ cases: \d+ passed, 1 failed$", done.stdout, re.M)


def test_junit_names_each_case_and_holds_the_diff_of_a_failure(examples: Path) -> None:
    guard = examples / "guard-rm-rf.sh"
    guard.write_text(guard.read_text().replace(FIND_LINE, FIND_LINE.replace('"find"', '"fnd"')))
    report = examples / "report.xml"
    done = hookgate(
        "hooks", "test", "--agent", "hookgate.yaml", "--junit", str(report), cwd=examples
    )
    assert done.returncode == 1
    root = ET.parse(report).getroot()
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert int(suite.get("tests", "0")) == len(cases) >= 20
    assert suite.get("failures") == "1"
    failed = [case for case in cases if case.find("failure") is not None]
    assert [case.get("name") for case in failed] == ["find -delete is refused"]
    failure = failed[0].find("failure")
    assert failure is not None
    assert "- decision: deny" in (failure.text or "")


def test_update_writes_the_answers_of_cases_that_have_none(examples: Path) -> None:
    cases = examples / "new.hooktest.yaml"
    cases.write_text(
        textwrap.dedent("""\
        # new cases: answers to be written
        - name: rm -rf
          event: preToolCall
          tool: shell
          arguments: {command: "rm -rf build"}
        - name: the scrubber
          event: postToolCall
          tool: shell
          arguments: {command: "ls"}
          result: "KEY=AKIAIOSFODNN7EXAMPLE"
        - name: a push
          event: preToolCall
          tool: shell
          arguments: {command: "git push -f origin x"}
        - name: kept as written
          event: preToolCall
          tool: shell
          arguments: {command: "ls"}
          expect: {decision: allow}
        """)
    )
    before = hookgate("hooks", "test", "--agent", "hookgate.yaml", str(cases), cwd=examples)
    assert before.returncode == 1
    assert before.stdout.count("no 'expect:'") == 3
    updated = hookgate(
        "hooks", "test", "--agent", "hookgate.yaml", "--update", str(cases), cwd=examples
    )
    assert updated.returncode == 0, updated.stdout + updated.stderr
    text = cases.read_text()
    assert text.startswith("# new cases: answers to be written\n")
    written = YAML(typ="safe").load(text)
    assert written[0]["expect"]["decision"] == "deny"
    assert written[0]["expect"]["by"] == "no-rm-rf"
    assert written[1]["expect"] == {"decision": "replace", "by": "scrub-aws",
                                    "result": "^KEY=\\[REDACTED_KEY\\]$"}  # fmt: skip
    assert written[2]["expect"]["input"] == {"command": "git push --force-with-lease origin x"}
    assert written[3]["expect"] == {"decision": "allow"}
    again = hookgate("hooks", "test", "--agent", "hookgate.yaml", str(cases), cwd=examples)
    assert again.returncode == 0, again.stdout


def test_test_files_are_found_beside_the_agent_file_and_under_tests_hooks(examples: Path) -> None:
    more = examples / "tests" / "hooks"
    more.mkdir(parents=True)
    (more / "extra.hooktest.yaml").write_text(
        '- {name: extra case, event: preToolCall, tool: shell, arguments: {command: "ls"},'
        " expect: {decision: allow}}\n"
    )
    done = hookgate("hooks", "test", "--agent", "hookgate.yaml", cwd=examples)
    assert done.returncode == 0, done.stdout
    assert "policy.hooktest.yaml  (agent hookgate.yaml)" in done.stdout
    assert "tests/hooks/extra.hooktest.yaml  (agent hookgate.yaml)" in done.stdout
    assert "  ok    extra case" in done.stdout


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """yolo, no rules, and a hook that asks for curl; with cases for both."""
    directory = tmp_path / "yolo"
    directory.mkdir()
    hook = directory / "ask-on-curl.sh"
    hook.write_text(ASK_ON_CURL)
    hook.chmod(0o755)
    (directory / "hookgate.yaml").write_text(
        textwrap.dedent("""\
        model: scripted:none.yaml
        yolo: true
        sandbox: {mode: off}
        tools: [shell]
        hooks:
          PreToolUse:
            - {name: ask-on-curl, matcher: Bash, format: claude, command: ./ask-on-curl.sh}
        """)
    )
    (directory / "yolo.hooktest.yaml").write_text(
        textwrap.dedent("""\
        - name: the hook asks
          event: preToolCall
          tool: shell
          arguments: {command: "curl https://example.com"}
          expect: {decision: ask}
        - name: yolo runs the rest
          event: preToolCall
          tool: shell
          arguments: {command: "make deploy"}
          expect: {decision: allow}
        """)
    )
    return directory


def test_a_hook_that_asks_asks_even_under_yolo_and_a_rule_less_call_runs(project_dir: Path) -> None:
    # The real gate's rule, not a re-reading of it: yolo skips consent, a hook's `ask` does not.
    done = hookgate("hooks", "test", "--agent", "hookgate.yaml", cwd=project_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "  ok    the hook asks  → ask (a preToolCall hook" in done.stdout
    assert "  ok    yolo runs the rest  → allow" in done.stdout


def test_mistakes_in_a_test_file_name_file_line_and_key(examples: Path) -> None:
    bad = examples / "bad.hooktest.yaml"
    cases = {
        "  expct: {decision: deny}\n": ("unknown key 'expct'", "did you mean 'expect'?"),
        "  expect: {decision: denied}\n": (
            "'denied' is no preToolCall decision",
            "did you mean 'deny'?",
        ),
        "  expect: {decision: deny, reason: '(rm'}\n": ("is not a regular expression", "escape"),
        "  result: oops\n": ("a preToolCall case has no 'result'", "takes: tool, arguments"),
    }
    for line, (message, hint) in cases.items():
        bad.write_text(f"- name: one\n  event: preToolCall\n  tool: shell\n{line}")
        done = hookgate("hooks", "test", "--agent", "hookgate.yaml", str(bad), cwd=examples)
        assert done.returncode == 1
        assert f"{bad.name}:4: [0] (one)" in done.stderr or f"{bad}:4: [0] (one)" in done.stderr, (
            done.stderr
        )
        assert message in done.stderr, done.stderr
        assert hint in done.stderr, done.stderr
    bad.write_text("- name: one\n  event: preToolCall\n  tool: bash\n")
    done = hookgate("hooks", "test", "--agent", "hookgate.yaml", str(bad), cwd=examples)
    assert done.returncode == 1
    assert "tool 'bash' is not offered by hookgate.yaml" in done.stderr
    assert "shell" in done.stderr


def test_schema_tests_describes_the_shipped_file(examples: Path) -> None:
    done = hookgate("hooks", "schema", "--tests", cwd=examples)
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    shipped = YAML(typ="safe").load((examples / "policy.hooktest.yaml").read_text())
    jsonschema.validate(shipped, schema)
    shipped[0]["expct"] = shipped[0].pop("expect")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(shipped, schema)


def test_question_cases_read_a_rewrite_and_added_context(tmp_path: Path) -> None:
    (tmp_path / "hookgate.yaml").write_text(
        textwrap.dedent("""\
        model: scripted:none.yaml
        hooks:
          preGeneration:
            - name: shout
              command: >-
                jq -c 'if (.prompt | test("quiet")) then {} else
                {prompt: (.prompt | ascii_upcase)} end'
            - name: notes
              command: >-
                jq -c '{context: "the build is red"}'
        """)
    )
    (tmp_path / "q.hooktest.yaml").write_text(
        textwrap.dedent("""\
        - name: rewritten
          event: preGeneration
          prompt: "deploy it"
          expect: {decision: rewrite, by: shout, prompt: "^DEPLOY IT$", context: "build is red"}
        - name: context only
          event: preGeneration
          prompt: "quiet please"
          expect: {decision: context, context: "^the build is red$"}
        - name: wrong on purpose
          event: preGeneration
          prompt: "quiet please"
          expect: {decision: allow, prompt: "^QUIET"}
        """)
    )
    done = hookgate("hooks", "test", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "  ok    rewritten  → rewrite (hook 'shout')" in done.stdout
    assert "  ok    context only  → context" in done.stdout
    wrong = done.stdout.split("  FAIL  wrong on purpose")[1]
    assert "- decision: allow\n        + decision: context\n" in wrong
    assert '- prompt: "^QUIET"\n        + prompt: "quiet please"\n' in wrong


def test_the_tools_a_session_adds_are_cases_too(tmp_path: Path) -> None:
    # `ask_agent` exists only in a live session of a file that names agents; a case may
    # still call it, with the real tool's consent need and the file's rules.
    (tmp_path / "hookgate.yaml").write_text(
        textwrap.dedent("""\
        model: scripted:none.yaml
        tools: [read_file]
        agents: {helper: {file: helper.yaml}, reviewer: {file: reviewer.yaml}}
        permissions: {allow: ["ask_agent(helper)"]}
        """)
    )
    (tmp_path / "a.hooktest.yaml").write_text(
        textwrap.dedent("""\
        - name: the helper is allowed
          event: preToolCall
          tool: ask_agent
          arguments: {agent: helper, question: "what now?"}
          expect: {decision: allow, by: permission rule}
        - name: the reviewer asks
          event: preToolCall
          tool: ask_agent
          arguments: {agent: reviewer, question: "is this ok?"}
          expect: {decision: ask}
        """)
    )
    done = hookgate("hooks", "test", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 cases: 2 passed, 0 failed" in done.stdout
