"""make_model: from a config's `model:` value to a working client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookgate.errors import ConfigError
from hookgate.messages import Message
from hookgate.models import DEFAULT_BASE_URL, ScriptedModel, make_model
from hookgate.models.openai_chat import OpenAIChatModel
from support.chat_server import ChatServer, ServedReply

pytestmark = pytest.mark.anyio

HELLO = [Message(role="user", content="hello")]


async def test_scripted_spec_loads_the_script_relative_to_base_dir(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "s.yaml").write_text("- text: from the script\n", encoding="utf-8")
    model = make_model("scripted:scripts/s.yaml", tmp_path)
    assert isinstance(model, ScriptedModel)
    assert (await model.complete(HELLO, [])).text == "from the script"


async def test_mapping_spec_talks_to_the_configured_server(
    tmp_path: Path, chat_server: ChatServer
) -> None:
    spec = {"name": "m1", "base_url": chat_server.url, "api_key_env": "K", "timeout": 5}
    model = make_model(spec, tmp_path, environ={"K": "sk-from-env"})
    chat_server.queue(ServedReply(text="served"))
    try:
        assert (await model.complete(HELLO, [])).text == "served"
    finally:
        await model.aclose()
    request = chat_server.requests[0]
    assert request.body["model"] == "m1"
    assert request.headers["authorization"] == "Bearer sk-from-env"


async def test_plain_name_uses_openai_base_url_from_the_environment(
    tmp_path: Path, chat_server: ChatServer
) -> None:
    model = make_model("llama3.2", tmp_path, environ={"OPENAI_BASE_URL": chat_server.url})
    chat_server.queue(ServedReply(text="served"))
    try:
        assert (await model.complete(HELLO, [])).text == "served"
    finally:
        await model.aclose()
    assert chat_server.requests[0].body["model"] == "llama3.2"


async def test_plain_name_defaults_to_local_ollama(tmp_path: Path) -> None:
    model = make_model("llama3.2", tmp_path, environ={})
    assert isinstance(model, OpenAIChatModel)
    assert model.config.base_url == DEFAULT_BASE_URL
    assert model.config.temperature is None
    await model.aclose()


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"name": "m", "tempurature": 0.2}, "model.tempurature: unknown key\n  hint: did you mean"),
        ({"base_url": "http://x/v1"}, "model: the model mapping needs a 'name'"),
        ({"name": 3}, "model.name: expected a non-empty string, got 3"),
        ({"name": "m", "base_url": "localhost:11434"}, "model.base_url: expected an http://"),
        ({"name": "m", "timeout": 0}, "model.timeout: expected seconds > 0, got 0.0"),
        ({"name": "m", "timeout": "fast"}, "model.timeout: expected a number, got 'fast'"),
        ({"name": "m", "temperature": True}, "model.temperature: expected a number, got True"),
        (
            {"name": "m", "tool_choice": "always"},
            "model.tool_choice: expected auto, none, required or {type: function",
        ),
        ({"name": "m", "extra": ["top_k"]}, "model.extra: expected a mapping of request fields"),
        (
            {"name": "m", "extra": {"stream": False}},
            "model.extra: 'stream' is a field hookgate sets itself",
        ),
        ("scripted:", "model: 'scripted:' names no script"),
        (["m"], "model: expected a model name, 'scripted:PATH' or a mapping, got ['m']"),
    ],
)
def test_bad_specs_are_config_errors(tmp_path: Path, spec: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_model(spec, tmp_path, environ={})
    assert str(caught.value).startswith(expected)


def test_where_prefixes_the_key_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^agent\.yaml:4: model\.nme: unknown key"):
        make_model({"nme": "m"}, tmp_path, where="agent.yaml:4: model")


def test_missing_script_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"absent\.yaml: cannot read the model script"):
        make_model("scripted:absent.yaml", tmp_path)
