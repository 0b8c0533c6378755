"""Model clients behind one `ModelClient` interface, and `make_model` to build one from config.

`scripted:PATH` plays back a YAML script (`hookgate.models.scripted`); a model name, or
a mapping {name, base_url, api_key_env, timeout, temperature}, talks to an
OpenAI-compatible server (`hookgate.models.openai_chat`).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hookgate.errors import ConfigError
from hookgate.models.base import ModelClient, TextSink
from hookgate.models.scripted import ScriptedModel

if TYPE_CHECKING:
    from hookgate.models.openai_chat import OpenAIChatConfig

__all__ = ["DEFAULT_BASE_URL", "ModelClient", "ScriptedModel", "TextSink", "make_model"]

SCRIPTED_PREFIX = "scripted:"
BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "http://localhost:11434/v1"  # Ollama's OpenAI-compatible endpoint
MODEL_KEYS = ("name", "base_url", "api_key_env", "timeout", "temperature")
_EXAMPLE = "model: {name: llama3.2, base_url: http://localhost:11434/v1}"


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
    Ollama). A mapping sets `name` (required), `base_url`, `api_key_env` (default
    `OPENAI_API_KEY`), `timeout` (seconds of server silence allowed) and `temperature`.
    Mistakes raise `ConfigError`; `where` (e.g. "agent.yaml:3: model") prefixes their
    key paths. `environ` (default `os.environ`) supplies the base URL and API key.
    """
    env = os.environ if environ is None else environ
    if isinstance(spec, str) and spec.startswith(SCRIPTED_PREFIX):
        script = spec.removeprefix(SCRIPTED_PREFIX).strip()
        if not script:
            raise ConfigError(f"{where}: {spec!r} names no script", hint="write scripted:PATH")
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
        DEFAULT_API_KEY_ENV,
        DEFAULT_TIMEOUT_S,
        OpenAIChatConfig,
    )

    for key in settings:
        if key not in MODEL_KEYS:
            close = difflib.get_close_matches(str(key), MODEL_KEYS, n=1)
            hint = (
                f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(MODEL_KEYS)}"
            )
            raise ConfigError(f"{where}.{key}: unknown key", hint=hint)
    if "name" not in settings:
        raise ConfigError(f"{where}: the model mapping needs a 'name'", hint=_EXAMPLE)
    name = _text(settings, "name", where)
    base_url = _text(settings, "base_url", where, env.get(BASE_URL_ENV) or DEFAULT_BASE_URL)
    if not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"{where}.base_url: expected an http:// or https:// URL, got {base_url!r}",
            hint="e.g. base_url: http://localhost:11434/v1",
        )
    timeout = _number(settings, "timeout", where, DEFAULT_TIMEOUT_S)
    if timeout <= 0:
        raise ConfigError(f"{where}.timeout: expected seconds > 0, got {timeout!r}")
    temperature = settings.get("temperature")
    if temperature is not None:
        temperature = _number(settings, "temperature", where, 0.0)
        if temperature < 0:
            raise ConfigError(f"{where}.temperature: expected a number >= 0, got {temperature!r}")
    return OpenAIChatConfig(
        name=name,
        base_url=base_url,
        api_key_env=_text(settings, "api_key_env", where, DEFAULT_API_KEY_ENV),
        timeout=timeout,
        temperature=temperature,
    )


def _text(settings: Mapping[str, Any], key: str, where: str, default: str = "") -> str:
    value = settings.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"{where}.{key}: expected a non-empty string, got {value!r}",
            hint="quote the value if YAML reads it as something else",
        )
    return value.strip()


def _number(settings: Mapping[str, Any], key: str, where: str, default: float) -> float:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}.{key}: expected a number, got {value!r}")
    return float(value)
