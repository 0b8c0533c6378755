"""Persistent hooks: their config key, the shipped examples, and the reply formats.

The failure modes (crash, hang, flood, garbage, killed group) are in
tests/reliability/test_persistent_hooks.py.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import ConfigError, HookEngine, Outcome, parse_hooks
from hookgate.hooks.files.yamlfile import Where

EXAMPLES = Path(__file__).parents[2] / "examples"


def shell_call(command: str) -> dict[str, Any]:
    return {"tool": "shell", "arguments": {"command": command}}


def persistent_child(tmp_path: Path, body: str, **entry: Any) -> dict[str, Any]:
    """A persistent hook running `body`, a Python child with `json` and `sys` imported."""
    child = tmp_path / "child.py"
    child.write_text("import json, sys\n" + body)
    return {"args": [sys.executable, str(child)], "persistent": True, **entry}


@pytest.mark.parametrize("script", ["persistent_guard.py", "persistent-guard.sh"])
def test_the_documented_examples_deny_rm_rf_and_allow_the_rest(
    make_engine: Callable[..., HookEngine],
    run_hooks: Callable[[HookEngine, str, Mapping[str, Any]], Outcome],
    script: str,
) -> None:
    engine = make_engine({"preToolCall": [
        {"args": [str(EXAMPLES / script)], "persistent": True, "onError": "fail"}
    ]})  # fmt: skip
    try:
        ran = [run_hooks(engine, "preToolCall", shell_call(c)) for c in ("ls", "rm -rf /", "ls")]
    finally:
        engine.close()
    assert [outcome.blocked for outcome in ran] == [False, True, False]
    assert ran[1].reason == "rm -rf / is never run here"
    assert not any(outcome.errors for outcome in ran)


@pytest.mark.parametrize("script", ["persistent_guard.py", "persistent-guard.sh"])
def test_the_reference_shows_each_example_whole(script: str) -> None:
    """docs/hooks.md holds the shipped example verbatim: the test above runs what it shows."""
    reference = (EXAMPLES.parent / "docs" / "hooks.md").read_text()
    assert (EXAMPLES / script).read_text() in reference


def test_a_reply_line_carries_exit_and_stderr_like_a_process_hook(
    make_engine: Callable[..., HookEngine], tmp_path: Path
) -> None:
    """exit 2 with stderr is a block with that reason, in the claude format as elsewhere."""
    hook = persistent_child(
        tmp_path,
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    assert m['event']['tool_name'] == 'Bash', m\n"
        "    print(json.dumps({'id': m['id'], 'exit': 2, 'stderr': 'not here'}), flush=True)\n",
        format="claude",
    )
    engine = make_engine({"preToolCall": [hook]})
    try:
        outcomes = [engine.run_sync("preToolCall", shell_call("ls")) for _ in range(2)]
    finally:
        engine.close()
    assert all(outcome.blocked and outcome.reason == "not here" for outcome in outcomes)


def test_each_reply_is_checked_against_its_own_event(
    make_engine: Callable[..., HookEngine],
    run_hooks: Callable[[HookEngine, str, Mapping[str, Any]], Outcome],
    tmp_path: Path,
) -> None:
    """A line that answered one event does not answer the next: the id is checked each
    time, a second `id` later in the line overrides the first, and a repeated reply
    keeps what it says (a deny, event after event)."""
    hook = persistent_child(
        tmp_path,
        'DENY = \'"reply": {"action": "deny"}\'\n'
        'NULL_BUT_ID_1 = \'"reply": null, "id": 1\'\n'
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    deny = m['event']['arguments']['command'] == 'deny'\n"
        "    tail = DENY if deny else NULL_BUT_ID_1\n"
        "    print('{\"id\": %d, %s}' % (m['id'], tail), flush=True)\n",
        onError="fail",
    )
    engine = make_engine({"preToolCall": [hook]})
    try:
        ran = [run_hooks(engine, "preToolCall", shell_call(c)) for c in ("ls", "ls", "deny") * 2]
    finally:
        engine.close()
    # Only the first event's id is 1, whichever `id` counts.
    assert [bool(outcome.errors) for outcome in ran] == [False, True, False, True, True, False]
    assert """replied '{"id": 2, "reply": null, "id": 1}' to event 2""" in str(ran[1].reason)
    assert all(outcome.blocked and not outcome.errors for outcome in ran[2::3]), ran


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"command": "x", "persistent": "yes"},
            "persistent: expected true or false, got a string 'yes'",
        ),
        ({"python": "m:f", "persistent": True}, "persistent applies to command and args hooks"),
        (
            {"http": {"url": "https://x.example"}, "persistent": True},
            "'persistent' applies to a process the hook starts",
        ),
    ],
)
def test_persistent_is_checked_at_load(tmp_path: Path, entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_hooks({"preToolCall": [entry]}, Where("test.yaml"), base_dir=tmp_path,
                    import_python=False)  # fmt: skip
    assert message in str(caught.value)
