"""Model clients behind one `ModelClient` interface, and `make_model` to build one from config.

`scripted:PATH` plays back a YAML script (`hookgate.models.scripted`); a model name, or
a mapping {name, base_url, api_key_env, timeout, timeout_total, temperature,
tool_choice, extra}, talks to an OpenAI-compatible server (`hookgate.models.openai_chat`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hookgate.errors import ConfigError
from hookgate.hooks.files.yamlfile import did_you_mean
from hookgate.hooks.records import NamedTuple
from hookgate.models.base import ModelClient, TextSink

if TYPE_CHECKING:
    from hookgate.models.openai_chat import OpenAIChatConfig
    from hookgate.models.scripted import ScriptedModel

__all__ = [
    "DEFAULT_BASE_URL",
    "MODEL_KEYS",
    "ModelClient",
    "ScriptedModel",
    "TextSink",
    "make_model",
    "model_setting_problem",
]

SCRIPTED_PREFIX = "scripted:"
BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "http://localhost:11434/v1"  # Ollama's OpenAI-compatible endpoint
MODEL_KEYS = (
    "name", "base_url", "api_key_env", "timeout", "timeout_total", "temperature",
    "tool_choice", "extra",
)  # fmt: skip
#: The `tool_choice` values the chat-completions API names; a mapping names one function.
TOOL_CHOICES = ("auto", "none", "required")
_EXAMPLE = "model: {name: llama3.2, base_url: http://localhost:11434/v1}"


def __getattr__(name: str) -> Any:
    if name == "ScriptedModel":  # reading an agent file (`hooks fire`) does not need it
        from hookgate.models.scripted import ScriptedModel

        return ScriptedModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_model(
    spec: str | Mapping[str, Any],
    base_dir: Path,
    *,
    where: str = "model",
    environ: Mapping[str, str] | None = None,
) -> ModelClient:
    """Build the model client a config's `model:` value asks for.

    `"scripted:PATH"` loads a `ScriptedModel` from PATH (relative to `base_dir`). Any
    other string is a model name on the server at `$OPENAI_BASE_URL` (default: local
    Ollama). A mapping sets `name` (required), `base_url`, `api_key_env` (the variable
    sent as the API key; without it none is sent, but `$OPENAI_API_KEY` to OpenAI's
    own API), `timeout` (seconds of server silence allowed), `timeout_total`
    (seconds one model call may take in all), `temperature`, `tool_choice` and `extra`
    (more request fields, sent as given).
    Mistakes raise `ConfigError`; `where` (e.g. "agent.yaml:3: model") prefixes their
    key paths. `environ` (default `os.environ`) supplies the base URL and API key.
    """
    env = os.environ if environ is None else environ
    if isinstance(spec, str) and spec.startswith(SCRIPTED_PREFIX):
        script = spec.removeprefix(SCRIPTED_PREFIX).strip()
        if not script:
            raise ConfigError(f"{where}: {spec!r} names no script", hint="write scripted:PATH")
        from hookgate.models.scripted import ScriptedModel  # asyncio: only a session needs it

        return ScriptedModel.from_file(base_dir / Path(script).expanduser())
    if isinstance(spec, str):
        settings: dict[str, Any] = {"name": spec}
    elif isinstance(spec, Mapping):
        settings = dict(spec)
    else:
        raise ConfigError(
            f"{where}: expected a model name, 'scripted:PATH' or a mapping, got {spec!r}",
            hint=_EXAMPLE,
        )
    # Deferred: importing the openai SDK costs most of a second, which scripted runs skip.
    from hookgate.models.openai_chat import OpenAIChatModel

    return OpenAIChatModel(_chat_config(settings, where, env), environ=env)


def _chat_config(
    settings: Mapping[str, Any], where: str, env: Mapping[str, str]
) -> OpenAIChatConfig:
    from hookgate.models.openai_chat import (
        DEFAULT_TIMEOUT_S,
        DEFAULT_TIMEOUT_TOTAL_S,
        OpenAIChatConfig,
    )

    for key in settings:
        if key not in MODEL_KEYS:
            hint = did_you_mean(str(key), MODEL_KEYS) or f"known keys: {', '.join(MODEL_KEYS)}"
            raise ConfigError(f"{where}.{key}: unknown key", hint=hint)
    if "name" not in settings:
        raise ConfigError(f"{where}: the model mapping needs a 'name'", hint=_EXAMPLE)
    given = {"base_url": env.get(BASE_URL_ENV) or DEFAULT_BASE_URL, **settings}
    for key, value in given.items():
        if (problem := model_setting_problem(key, value)) is not None:
            raise ConfigError(f"{where}.{key}: {problem.message}", hint=problem.hint)
    temperature = settings.get("temperature")
    return OpenAIChatConfig(
        name=settings["name"].strip(),
        base_url=given["base_url"].strip(),
        api_key_env=settings["api_key_env"].strip() if "api_key_env" in settings else None,
        timeout=float(settings.get("timeout", DEFAULT_TIMEOUT_S)),
        timeout_total=float(settings.get("timeout_total", DEFAULT_TIMEOUT_TOTAL_S)),
        temperature=None if temperature is None else float(temperature),
        tool_choice=settings.get("tool_choice"),
        extra=dict(settings.get("extra") or {}),
    )


class SettingProblem(NamedTuple):
    message: str
    hint: str | None = None


def model_setting_problem(key: str, value: Any) -> SettingProblem | None:
    """What is wrong with `value` as the model setting `key` (one of `MODEL_KEYS`), or None.

    The agent file's loader asks this of every setting, so that a mistake is reported
    with its file and line before anything starts; `make_model` asks it again.
    """
    if key in ("name", "base_url", "api_key_env"):
        if not isinstance(value, str) or not value.strip():
            return SettingProblem(
                f"expected a non-empty string, got {value!r}",
                "quote the value if YAML reads it as something else",
            )
        if key == "base_url" and not value.strip().startswith(("http://", "https://")):
            return SettingProblem(
                f"expected an http:// or https:// URL, got {value.strip()!r}",
                "e.g. base_url: http://localhost:11434/v1",
            )
        return None
    if key == "tool_choice":
        return _tool_choice_problem(value)
    if key == "extra":
        return _extra_problem(value)
    if key == "temperature" and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return SettingProblem(f"expected a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        return SettingProblem(f"expected a number, got {value!r}")
    if key in ("timeout", "timeout_total") and not number > 0:  # `not >`: NaN is no timeout either
        return SettingProblem(f"expected seconds > 0, got {number!r}")
    if key == "temperature" and not number >= 0:
        return SettingProblem(f"expected a number >= 0, got {number!r}")
    return None


def _tool_choice_problem(value: Any) -> SettingProblem | None:
    if value in TOOL_CHOICES:
        return None
    function = value.get("function") if isinstance(value, Mapping) else None
    if (
        isinstance(value, Mapping) and value.get("type") == "function"
        and isinstance(function, Mapping) and isinstance(function.get("name"), str)
    ):  # fmt: skip
        return None
    return SettingProblem(
        f"expected auto, none, required or {{type: function, function: {{name: TOOL}}}}, "
        f"got {value!r}"
    )


def _extra_problem(value: Any) -> SettingProblem | None:
    from hookgate.models.openai_chat import RESERVED_FIELDS

    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        return SettingProblem(
            f"expected a mapping of request fields, got {value!r}", "e.g. extra: {top_k: 20}"
        )
    for key in value:
        if key in RESERVED_FIELDS:
            return SettingProblem(
                f"{key!r} is a field hookgate sets itself",
                "tool_choice and temperature have keys of their own under model:",
            )
    return None
