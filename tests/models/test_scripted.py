"""ScriptedModel: strict script loading and in-order playback."""

from __future__ import annotations

import asyncio
import textwrap
import time
from pathlib import Path

import pytest

from hookgate.errors import ConfigError, ModelError
from hookgate.messages import Message, ModelReply, ToolCall
from hookgate.models import scripted
from hookgate.models.scripted import ScriptedModel, ScriptedReply, ScriptedToolCall, load_script

pytestmark = pytest.mark.anyio

HELLO = [Message(role="user", content="hello")]


def write_script(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "script.yaml"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def load_error(tmp_path: Path, source: str) -> tuple[Path, str]:
    path = write_script(tmp_path, source)
    with pytest.raises(ConfigError) as caught:
        ScriptedModel.from_file(path)
    return path, str(caught.value)


async def test_replies_come_in_order_with_generated_call_ids(tmp_path: Path) -> None:
    path = write_script(
        tmp_path,
        """\
        - text: Let me look.
          tool_calls:
            - name: read_file
              arguments: {path: a.txt, lines: [1, 2], deep: {ok: true, none: null}}
            - name: list_files
        - tool_calls: [{name: read_file, arguments: {path: b.txt}}]
        - text: All done.
        """,
    )
    model = ScriptedModel.from_file(path)
    first = await model.complete(HELLO, [])
    second = await model.complete(HELLO, [])
    third = await model.complete(HELLO, [])
    assert first == ModelReply(
        text="Let me look.",
        tool_calls=(
            ToolCall(
                id="call_1",
                name="read_file",
                arguments={"path": "a.txt", "lines": [1, 2], "deep": {"ok": True, "none": None}},
            ),
            ToolCall(id="call_2", name="list_files", arguments={}),
        ),
    )
    assert second == ModelReply(
        text="", tool_calls=(ToolCall(id="call_3", name="read_file", arguments={"path": "b.txt"}),)
    )
    assert third == ModelReply(text="All done.")
    assert type(first.tool_calls[0].arguments["lines"]) is list, "plain JSON types, not ruamel's"


async def test_text_is_streamed_in_several_deltas() -> None:
    model = ScriptedModel([ScriptedReply(text="The answer is forty-two.")])
    deltas: list[str] = []
    reply = await model.complete(HELLO, [], on_text=deltas.append)
    assert len(deltas) > 1
    assert "".join(deltas) == reply.text == "The answer is forty-two."


async def test_running_out_of_replies_is_a_clear_model_error() -> None:
    model = ScriptedModel([ScriptedReply(text="one"), ScriptedReply(text="two")])
    await model.complete(HELLO, [])
    await model.complete(HELLO, [])
    with pytest.raises(ModelError) as caught:
        await model.complete(HELLO, [])
    assert str(caught.value) == "the scripted model has no reply left (2 used)"


@pytest.mark.parametrize(
    "last",
    [
        Message(role="user", content="please fix the TODO in a.txt"),
        Message(role="tool", content="line 3: TODO", tool_call_id="call_1"),
    ],
)
async def test_expect_passes_when_the_last_user_or_tool_message_contains_it(
    last: Message,
) -> None:
    model = ScriptedModel([ScriptedReply(text="ok", expect="TODO")])
    conversation = [Message(role="user", content="old TODO"), last]
    assert (await model.complete(conversation, [])).text == "ok"


async def test_expect_fails_with_what_it_wanted_and_what_it_got() -> None:
    model = ScriptedModel([ScriptedReply(text="ok", expect="TODO")])
    conversation = [
        Message(role="user", content="fix the TODO"),
        Message(role="assistant", content="TODO is mentioned only by the assistant"),
        Message(role="tool", content="file is empty", tool_call_id="call_1"),
    ]
    with pytest.raises(ModelError) as caught:
        await model.complete(conversation, [])
    assert str(caught.value) == (
        "script expected 'TODO' in the last user/tool message at reply [0], got 'file is empty'"
    )


async def test_error_reply_fails_the_call_and_the_script_moves_on() -> None:
    model = ScriptedModel([ScriptedReply(error="the model is overloaded"), ScriptedReply("ok")])
    with pytest.raises(ModelError, match=r"^the model is overloaded$"):
        await model.complete(HELLO, [])
    assert (await model.complete(HELLO, [])).text == "ok"


async def test_delay_can_be_cancelled_and_consumes_its_reply() -> None:
    model = ScriptedModel([ScriptedReply(text="slow", delay=30), ScriptedReply(text="next")])
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.1):
            await model.complete(HELLO, [])
    assert time.monotonic() - started < 2
    assert (await model.complete(HELLO, [])).text == "next"


async def test_delay_waits_before_answering() -> None:
    model = ScriptedModel([ScriptedReply(text="slow", delay=0.2)])
    started = time.monotonic()
    await model.complete(HELLO, [])
    assert time.monotonic() - started >= 0.2


def test_the_documented_example_loads(tmp_path: Path) -> None:
    doc = scripted.__doc__ or ""
    example = [line for line in doc.splitlines() if line.startswith("    ")]
    replies = load_script(write_script(tmp_path, "\n".join(example)))
    assert replies == (
        ScriptedReply(
            text="Let me look.",
            tool_calls=(ScriptedToolCall("read_file", {"path": "notes.txt"}),),
        ),
        ScriptedReply(text="The notes say TODO.", expect="TODO"),
        ScriptedReply(text="Slow answer.", delay=2.5),
        ScriptedReply(error="the model is overloaded"),
    )


def test_unknown_key_names_file_line_path_and_suggests_the_right_key(tmp_path: Path) -> None:
    path, message = load_error(
        tmp_path,
        """\
        - text: hi
        - text: there
          tool_cals: []
        """,
    )
    assert message == f"{path}:3: [1].tool_cals: unknown key\n  hint: did you mean 'tool_calls'?"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("- text: 42\n", ":1: [0].text: expected a string, got 42\n  hint: quote it"),
        ("- text: hi\n  delay: soon\n", ":2: [0].delay: expected a number of seconds >= 0, got "),
        ("- text: hi\n  delay: -1\n", ":2: [0].delay: expected a number of seconds >= 0, got -1"),
        ("- tool_calls: read_file\n", ":1: [0].tool_calls: expected a list of tool calls, got "),
        (
            "- tool_calls:\n  - {arguments: {}}\n",
            ":2: [0].tool_calls[0]: a tool call needs a 'name'",
        ),
        (
            "- tool_calls:\n  - name: read\n    arguments: [a.txt]\n",
            ":3: [0].tool_calls[0].arguments: expected a mapping of JSON values, got ['a.txt']",
        ),
        (
            "- tool_calls:\n  - name: read\n    arguments: {when: 2024-01-01}\n",
            ":3: [0].tool_calls[0].arguments: expected a mapping of JSON values",
        ),
        (
            "- tool_calls:\n  - name: read\n    argument: {}\n",
            ":3: [0].tool_calls[0].argument: unknown key\n  hint: did you mean 'arguments'?",
        ),
        ("- hello\n", ":1: [0]: expected a mapping like {text: ...}, got 'hello'"),
        ("- expect: x\n", ":1: [0]: a reply needs 'text', 'tool_calls' or 'error'"),
        ("- error: boom\n  text: hi\n", ":1: [0]: 'error' cannot be combined with 'text'"),
        ("text: hi\n", ":1: top level: expected a list of replies, got {'text': 'hi'}"),
        ("[]\n", ":1: top level: expected a list of replies, got an empty list"),
        ("", ":1: top level: expected a list of replies, got nothing (null)"),
        ("- text: [unclosed\n", "invalid YAML"),
        ("- text: a\n  text: b\n", "invalid YAML"),
    ],
)
def test_invalid_scripts_are_config_errors_naming_line_and_value(
    tmp_path: Path, source: str, expected: str
) -> None:
    path, message = load_error(tmp_path, source)
    assert message.startswith(f"{path}:")
    assert expected in message


def test_every_mistake_is_reported_at_once(tmp_path: Path) -> None:
    path, message = load_error(tmp_path, "- txt: a\n- text: ok\n- text: 1.5\n")
    assert message.splitlines() == [
        f"{path}:1: [0].txt: unknown key",
        "  hint: did you mean 'text'?",
        f"{path}:3: [2].text: expected a string, got 1.5",
        "  hint: quote it to make it a string",
    ]


def test_missing_script_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the model script: No such file"):
        ScriptedModel.from_file(tmp_path / "absent.yaml")
