"""Which environment variable, if any, is sent as the API key to a model server.

The variable `api_key_env` names, always; without one, `$OPENAI_API_KEY` only to
OpenAI's own API (`https://api.openai.com`): an agent file's `base_url` (a local
server, or one of its author's choosing) gets no key it did not name.
"""

from __future__ import annotations

from urllib.parse import urlsplit

#: The variable sent to OpenAI's API when a model mapping names none.
OPENAI_KEY_ENV = "OPENAI_API_KEY"
#: The host that gets `$OPENAI_API_KEY` unasked: the provider's own.
OPENAI_HOST = "api.openai.com"


def key_variable(base_url: str, api_key_env: str | None) -> str | None:
    """The variable whose value is sent as the key to `base_url`; None: no key is sent."""
    if api_key_env is not None:
        return api_key_env
    parts = urlsplit(base_url.strip())
    if parts.scheme == "https" and parts.hostname == OPENAI_HOST:
        return OPENAI_KEY_ENV
    return None


def where_the_key_goes(base_url: str, api_key_env: str | None) -> str:
    """In plain words, for the trust summary: which variable goes where."""
    variable = key_variable(base_url, api_key_env)
    if variable is None:
        return f"no API key is sent to {base_url} (api_key_env names none)"
    return f"the value of ${variable} is sent to {base_url} as the API key"
