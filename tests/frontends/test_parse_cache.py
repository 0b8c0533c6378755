"""The parse cache: a config file read before is not parsed again, and nothing else changes.

Through the real `hookgate` command: the same file gives the same hooks and the same
errors (file, line, key) from the cache as from the parser; an edited file is parsed
anew; a damaged entry is a miss; trust is judged on the file, never on the cache.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frontends.test_startup_imports import imported
from runtime.project import HOOKGATE, Project

FIRE = ("hooks", "fire", "preToolCall", "--tool", "shell")


def cache_entries(project: Project) -> list[Path]:
    return sorted((project.home / "cache").rglob("*.json"))


def blocking_hook(reason: str) -> dict[str, object]:
    return {"command": f"echo {reason}; exit 2"}


@pytest.fixture
def guarded(project: Project) -> Project:
    project.write_agent(project.script({"text": "hello"}), hooks={"preToolCall": [blocking_hook("first")]})  # fmt: skip
    return project


def fired_reason(project: Project) -> str:
    done = project.hookgate(*FIRE, stdin="{}", trusted=False)
    assert done.returncode == 2, done.stderr
    return str(json.loads(done.stdout)["reason"])


def test_a_file_read_again_comes_from_the_cache_without_the_parser(guarded: Project) -> None:
    assert fired_reason(guarded) == "first"
    assert len(cache_entries(guarded)) == 1
    modules = imported(guarded, [str(HOOKGATE), *FIRE], stdin="{}", expect_rc=2)
    assert "ruamel.yaml" not in modules
    assert fired_reason(guarded) == "first"


def test_an_edited_file_is_parsed_again(guarded: Project) -> None:
    assert fired_reason(guarded) == "first"
    guarded.write_agent(guarded.script({"text": "hello"}), hooks={"preToolCall": [blocking_hook("second")]})  # fmt: skip
    assert fired_reason(guarded) == "second"
    assert len(cache_entries(guarded)) == 2


@pytest.mark.parametrize(
    "damage",
    [b"", b"{not json", b'["m", [["hooks", 0]]]', b'{"model": "x"}', b"\xff\xfe"],
    ids=["empty", "not-json", "wrong-shape", "not-ours", "not-utf8"],
)
def test_a_damaged_entry_is_ignored_and_replaced(guarded: Project, damage: bytes) -> None:
    assert fired_reason(guarded) == "first"
    (entry,) = cache_entries(guarded)
    entry.write_bytes(damage)
    assert fired_reason(guarded) == "first"
    assert json.loads(entry.read_text())[0] == "m"  # the parse was kept again


def test_a_home_the_cache_makes_is_private(guarded: Project) -> None:
    assert not guarded.home.exists()
    assert fired_reason(guarded) == "first"
    for folder in (guarded.home, *cache_entries(guarded)[0].parents):
        if folder.is_relative_to(guarded.home):
            assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_an_unwritable_cache_changes_nothing(guarded: Project) -> None:
    guarded.home.mkdir(parents=True, exist_ok=True)
    (guarded.home / "cache").write_text("a file where the folder would be")
    assert fired_reason(guarded) == "first"
    assert fired_reason(guarded) == "first"


def test_a_mistake_names_the_same_file_line_and_key_from_the_cache(project: Project) -> None:
    project.agent_file.write_text(
        "model: scripted:replies.yaml\n"
        "hooks:\n"
        "  preToolCall:\n"
        "    - command: 'true'\n"
        "      timeout: soon\n"
    )
    errors = []
    for _ in range(2):
        done = project.hookgate("hooks", "check", trusted=False)
        assert done.returncode == 1
        errors.append(done.stderr)
    assert len(cache_entries(project)) == 1
    assert errors[0] == errors[1]
    assert f"{project.agent_file}:5: hooks.preToolCall[0].timeout:" in errors[1]
    assert "'soon'" in errors[1]


def test_the_cache_never_makes_an_edited_file_trusted(guarded: Project) -> None:
    guarded.trust()
    assert guarded.hookgate("-p", "hi", trusted=False).returncode == 0
    guarded.write_agent(guarded.script({"text": "hello"}), hooks={"preToolCall": [blocking_hook("other")]})  # fmt: skip
    assert fired_reason(guarded) == "other"  # the edited file's parse is in the cache now
    refused = guarded.hookgate("-p", "hi", trusted=False)
    assert refused.returncode == 1
    assert "trust" in refused.stderr
    assert refused.stdout == ""


def test_a_model_script_mistake_names_the_same_line_from_the_cache(project: Project) -> None:
    (project.dir / "replies.yaml").write_text("- text: hi\n- text: there\n  tool_call: []\n")
    project.write_agent("scripted:replies.yaml")
    errors = [project.hookgate("-p", "hi").stderr for _ in range(2)]
    assert errors[0] == errors[1]
    assert "replies.yaml:3: [1].tool_call: unknown key" in errors[1]
    assert "did you mean 'tool_calls'?" in errors[1]


def test_a_hook_scripts_commands_come_from_the_cache_and_still_pin_what_it_runs(
    project: Project,
) -> None:
    """A session reads a hook's shell script for what it runs before the hook's first
    run (`hookgate hook`: at every event): parsed once, the words kept; an edit of the
    file it runs still stops the start."""
    policy = project.dir / "tools" / "policy.sh"
    policy.parent.mkdir()
    policy.write_text("exit 0\n")
    guard = project.hook("guard.sh", 'exec sh "$(dirname "$0")/../tools/policy.sh"')
    project.write_agent(project.script({"text": "hello"}, {"text": "again"}), hooks={"preGeneration": [{"command": guard}]})  # fmt: skip
    project.trust()
    assert project.hookgate("-p", "hi", trusted=False).stdout == "hello\n"
    (kept,) = (project.home / "cache" / "shell-commands-v2").glob("*.json")
    words = ["exec", "sh", '$(dirname "$0")/../tools/policy.sh']
    assert any(command[:3] == words for command in json.loads(kept.read_text()))

    modules = imported(project, [str(HOOKGATE), "-p", "hi"])
    policy.write_text("exit 2\n")
    done = project.hookgate("-p", "hi", trusted=False)

    assert "hookgate.hooks.shell.words" not in modules
    assert done.returncode == 1
    assert f"{policy} changed since you trusted it" in done.stderr
