"""The hook config: strict YAML whose every mistake names file, line, key path and value."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

from hookgate.hooks import EVENTS, ConfigError, HooksConfig, OnError, load_hooks_file
from hookgate.hooks.config import DEFAULT_SHELL, parse_duration, parse_hooks
from hookgate.hooks.files.yamlfile import MAX_SIZE, MAX_VALUES, Where, read_config, read_file


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hookgate.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def load(tmp_path: Path, text: str) -> HooksConfig:
    return load_hooks_file(write(tmp_path, text))


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return str(caught.value)


# --- what a valid file gives ----------------------------------------------------------------


def test_a_valid_file_gives_each_events_hooks_in_order(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        """
        model: some-model   # not ours: the agent file's other keys are left alone
        hooks:
          PreToolUse:
            - name: guard
              command: ./guard.sh
              matcher: ^shell$
              timeout: 500ms
              onError: fail
            - args: [./audit.py, --quiet]
              format: mecatl
          postGeneration:
            - command: ./log.sh
              env: {LEVEL: debug, COUNT: 3}
        """,
    )
    guard, audit = config.for_event("preToolCall")
    assert (guard.name, guard.timeout, guard.on_error) == ("guard", 0.5, OnError.FAIL)
    assert guard.argv() == (DEFAULT_SHELL, "-c", "./guard.sh")
    assert guard.matches("shell")
    assert not guard.matches("read_file")
    assert audit.argv() == ("./audit.py", "--quiet")
    assert (audit.name, audit.format, audit.timeout) == ("./audit.py --quiet", "mecatl", 30.0)
    (log,) = config.for_event("postGeneration")
    assert log.env == {"LEVEL": "debug", "COUNT": "3"}
    assert log.origin == f"{tmp_path / 'hookgate.yaml'}:12"
    assert [hook.name for hook in config] == ["guard", "./audit.py --quiet", "./log.sh"]


def test_a_config_and_its_hooks_are_values_no_one_can_change(tmp_path: Path) -> None:
    text = "hooks:\n  preToolCall:\n    - {command: ./guard.sh, env: {A: b}}\n"
    config = load(tmp_path, text)
    (hook,) = config

    assert config == load(tmp_path, text)
    assert config != load(tmp_path, "hooks: {}\n")
    with pytest.raises(AttributeError):
        config.hooks = {}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        hook.command = "true"  # type: ignore[misc]
    assert "./guard.sh" in repr(config)


def test_a_file_without_hooks_has_none(tmp_path: Path) -> None:
    assert list(load(tmp_path, "model: x\n")) == []
    assert list(load(tmp_path, "")) == []
    assert list(load(tmp_path, "hooks:\n  preToolCall:\n")) == []


@pytest.mark.parametrize("event", list(EVENTS))
def test_on_error_and_timeout_defaults(tmp_path: Path, event: str) -> None:
    config = load(tmp_path, f"hooks:\n  {event}:\n    - command: 'true'\n")
    (hook,) = config.for_event(event)
    fail_safe = event in ("sessionStart", "preGeneration")
    assert hook.on_error is (OnError.FAIL if fail_safe else OnError.WARN)
    assert hook.timeout == 10.0


def test_mecatl_hooks_default_to_30_seconds(tmp_path: Path) -> None:
    (hook,) = load(tmp_path, "hooks:\n  Stop:\n    - {command: x, format: mecatl}\n")
    assert hook.timeout == 30.0


def test_a_long_command_gets_a_short_default_name(tmp_path: Path) -> None:
    (hook,) = load(tmp_path, f"hooks:\n  preToolCall:\n    - command: {'x' * 60}\n")
    assert hook.name == "x" * 39 + "…"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("500ms", 0.5), ("10s", 10.0), ("2m", 120.0), ("2.5", 2.5), (" 3 s ", 3.0),
     (2.5, 2.5), (7, 7.0), ("1.5m", 90.0)],
)  # fmt: skip
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["10 sec", "ten", "1h", "-1s", "", True, None, [1], 10**400])
def test_what_is_not_a_duration(text: object) -> None:
    assert parse_duration(text) is None


@pytest.mark.parametrize("value", ["500ms", "10s", "2m", "2.5", 1])
def test_timeout_in_a_file(tmp_path: Path, value: str) -> None:
    (hook,) = load(tmp_path, f"hooks:\n  preToolCall:\n    - {{command: x, timeout: {value!r}}}\n")
    assert hook.timeout == parse_duration(value)


# --- what a mistake says --------------------------------------------------------------------


def test_an_unknown_key_names_file_line_path_value_and_a_hint(tmp_path: Path) -> None:
    message = error_of(
        tmp_path,
        """
        hooks:
          preToolCall:
            - name: guard
              comand: ./guard.sh
        """,
    )
    assert message == (
        f"{tmp_path / 'hookgate.yaml'}:4: hooks.preToolCall[0].comand: unknown key 'comand'\n"
        "  hint: did you mean 'command'?"
    )


def test_an_empty_key_still_shows_in_the_key_path(tmp_path: Path) -> None:
    """Found by fuzzing: `"": 1` made the path vanish from the message."""
    message = error_of(tmp_path, 'hooks:\n  preToolCall:\n    - command: x\n      "": 1\n')
    assert message.startswith(f"{tmp_path / 'hookgate.yaml'}:4: hooks.preToolCall[0].'': ")
    assert "unknown key ''" in message


def test_an_unknown_event_suggests_the_right_spelling(tmp_path: Path) -> None:
    message = error_of(tmp_path, "hooks:\n  preToolcall:\n    - command: x\n")
    assert message.startswith(f"{tmp_path / 'hookgate.yaml'}:2: hooks.preToolcall: ")
    assert "unknown event 'preToolcall'" in message
    assert "hint: did you mean 'preToolCall'?" in message


def test_an_unknown_event_far_from_any_lists_the_events(tmp_path: Path) -> None:
    message = error_of(tmp_path, "hooks:\n  onSave:\n    - command: x\n")
    assert "hint: events: sessionStart, preGeneration, preToolCall" in message


def test_one_event_under_both_spellings_is_refused(tmp_path: Path) -> None:
    message = error_of(
        tmp_path,
        "hooks:\n  preToolCall:\n    - command: x\n  PreToolUse:\n    - command: y\n",
    )
    assert ":4: hooks.PreToolUse: 'PreToolUse' repeats event 'preToolCall'" in message


def test_a_bad_on_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, "hooks:\n  preToolCall:\n    - {command: x, onError: fial}\n")
    assert "hooks.preToolCall[0].onError: 'fial' is not one of warn, fail, ignore" in message
    assert "hint: did you mean 'fail'?" in message


@pytest.mark.parametrize("value", ["10 sec", "0", "-1", "3601", "true", "[1]", "forever"])
def test_a_bad_timeout(tmp_path: Path, value: str) -> None:
    message = error_of(
        tmp_path, f"hooks:\n  preToolCall:\n    - command: x\n      timeout: {value}\n"
    )
    assert ":4: hooks.preToolCall[0].timeout: expected a duration above 0" in message
    assert "hint: seconds as a number, or a string such as '500ms', '10s', '2m'" in message


def test_a_bad_timeout_shows_the_value(tmp_path: Path) -> None:
    message = error_of(tmp_path, "hooks:\n  preToolCall:\n    - {command: x, timeout: 10 sec}\n")
    assert "got a string '10 sec'" in message


@pytest.mark.parametrize("event", ["postGeneration", "preGeneration"])
def test_a_matcher_needs_a_tool_or_agent_to_match(tmp_path: Path, event: str) -> None:
    message = error_of(tmp_path, f"hooks:\n  {event}:\n    - {{command: x, matcher: shell}}\n")
    assert f"hooks.{event}[0].matcher: event {event!r} has no tool or agent name" in message
    assert "hint: remove the matcher" in message


def test_an_invalid_matcher(tmp_path: Path) -> None:
    message = error_of(tmp_path, "hooks:\n  preToolCall:\n    - {command: x, matcher: '(shell'}\n")
    assert "invalid regular expression '(shell'" in message


@pytest.mark.parametrize(
    ("entry", "found"),
    [("{command: x, args: [y]}", "command and args"), ("{name: x}", "none of them"),
     ("{command: x, python: 'a:b'}", "command and python"),
     ("{args: [x], http: {url: 'http://a'}}", "args and http")],
)  # fmt: skip
def test_exactly_one_way_to_run(tmp_path: Path, entry: str, found: str) -> None:
    message = error_of(tmp_path, f"hooks:\n  preToolCall:\n    - {entry}\n")
    assert (
        f"hooks.preToolCall[0]: a hook needs exactly one of command, args, python, http or model; found {found}"
        in message
    )
    assert "hint: command: 'a shell command line'" in message


def test_a_python_hook_that_does_not_import(tmp_path: Path) -> None:
    message = error_of(tmp_path, "hooks:\n  preToolCall:\n    - python: no_such_module_x:guard\n")
    assert ":3: hooks.preToolCall[0].python: cannot import 'no_such_module_x:guard'" in message
    assert "hint: is the module on PYTHONPATH?" in message


@pytest.mark.parametrize(
    ("reference", "says"),
    [("json", "expected 'package.module:function'"), ("json:nope", "cannot import 'json:nope'"),
     ("json:__doc__", "is not callable")],
)  # fmt: skip
def test_python_references(tmp_path: Path, reference: str, says: str) -> None:
    assert says in error_of(tmp_path, f"hooks:\n  preToolCall:\n    - python: '{reference}'\n")


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        (
            "{args: []}",
            "hooks.preToolCall[0].args: expected a non-empty list of strings, got a list []",
        ),
        ("{args: [a, 1]}", "expected a non-empty list of strings"),
        (
            "{command: ''}",
            "hooks.preToolCall[0].command: expected a non-empty string, got a string ''",
        ),
        ("{command: x, env: [A]}", "hooks.preToolCall[0].env: expected a mapping"),
        ("{command: x, env: {A: [1]}}", "hooks.preToolCall[0].env.A: expected a string value"),
        ("{command: x, env: {'A=B': c}}", "invalid variable name 'A=B'"),
        ("{command: x, cwd: nowhere}", "hooks.preToolCall[0].cwd: 'nowhere' is not a directory"),
        ("{command: x, format: claud}", "'claud' is not one of native, mecatl, claude"),
        (
            "{command: x, name: 3}",
            "hooks.preToolCall[0].name: expected a non-empty string, got a number 3",
        ),
        ("[command, x]", "hooks.preToolCall[0]: expected a hook (a mapping), got a list"),
    ],
)
def test_each_bad_value_is_named(tmp_path: Path, entry: str, says: str) -> None:
    assert says in error_of(tmp_path, f"hooks:\n  preToolCall:\n    - {entry}\n")


def test_a_format_without_the_event(tmp_path: Path) -> None:
    message = error_of(tmp_path, "hooks:\n  preAsk:\n    - {command: x, format: mecatl}\n")
    assert "format 'mecatl' has no counterpart of event 'preAsk'" in message
    assert "hint: use format: native for this event" in message


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("hooks: [a]\n", "hooks: expected a mapping of event names to lists of hooks"),
        (
            "hooks:\n  preToolCall: x\n",
            "hooks.preToolCall: expected a list of hooks, got a string 'x'",
        ),
        ("- a\n", "expected the file's top level (a mapping), got a list"),
    ],
)
def test_bad_structure(tmp_path: Path, text: str, says: str) -> None:
    assert says in error_of(tmp_path, text)


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    message = error_of(tmp_path, "hooks:\n  preToolCall:\n    - command: [x\n")
    assert re.match(rf"{re.escape(str(tmp_path / 'hookgate.yaml'))}:\d+: invalid YAML", message)


def test_a_duplicate_key_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, "hooks:\n  preToolCall:\n    - {command: x, command: y}\n")
    assert "invalid YAML" in message


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file") as caught:
        load_hooks_file(tmp_path / "absent.yaml")
    assert caught.value.hint
    assert "--agent" in caught.value.hint


@pytest.mark.parametrize(
    "entry",
    [
        {"command": "echo a\x00b"},
        {"args": ["echo", "a\x00b"]},
        {"command": "true", "env": {"A": "x\x00y"}},
        {"command": "true", "env": {"A\x00B": "x"}},
    ],
)
def test_a_nul_character_is_refused_at_load_time(entry: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        parse_hooks({"preToolCall": [entry]}, Where("h.yaml"), base_dir=Path("."))


@pytest.mark.parametrize(
    "text", ["!!int", "!!float", "!!bool x", "a: !!int zz", "hooks: !!timestamp x"]
)
def test_malformed_tagged_scalars_are_config_errors(tmp_path: Path, text: str) -> None:
    path = tmp_path / "hookgate.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_hooks_file(path)


def test_anchors_and_merge_keys_are_read_as_written() -> None:
    text = textwrap.dedent("""\
        base: &base {timeout: 5s, onError: fail}
        one: {<<: *base, command: a}
        two: [*base, *base]
    """)
    document = read_config(text, "anchors.yaml")
    assert dict(document["one"]) == {"timeout": "5s", "onError": "fail", "command": "a"}
    assert [dict(item) for item in document["two"]] == [dict(document["base"])] * 2


def test_aliases_that_expand_past_the_value_budget_are_refused() -> None:
    """An alias bomb: 9**7 values from a few hundred bytes; refused while counting."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 7)]
    with pytest.raises(ConfigError, match=f"bomb.yaml: more than {MAX_VALUES:,} values"):
        read_config("\n".join(lines), "bomb.yaml")


def test_a_file_past_the_size_limit_is_refused_unparsed() -> None:
    text = "# " + "x" * MAX_SIZE
    with pytest.raises(ConfigError, match=f"big.yaml: {len(text):,} characters, more than"):
        read_config(text, "big.yaml")


def test_a_config_file_is_read_whole_up_to_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "full.yaml"
    path.write_bytes(b"#" * MAX_SIZE)
    assert len(read_file(path)) == MAX_SIZE
    path.write_bytes(b"#" * (MAX_SIZE + 1))
    with pytest.raises(ConfigError, match=f"full.yaml: more than {MAX_SIZE:,} bytes"):
        read_file(path)


@pytest.mark.parametrize("kind", ["a directory", "a named pipe", "a symlink to /dev/zero"])
def test_only_a_regular_file_is_read_and_nothing_blocks(tmp_path: Path, kind: str) -> None:
    """A pipe nobody writes would block the read; /dev/zero never ends."""
    path = tmp_path / "hookgate.yaml"
    if kind == "a directory":
        path.mkdir()
    elif kind == "a named pipe":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match="not a regular file"):
        read_file(path)
