"""Which variable is sent as the API key: the one `api_key_env` names, else
`$OPENAI_API_KEY` to OpenAI's own API alone (the end-to-end case is in tests/trust)."""

from __future__ import annotations

import pytest

from hookgate.hooks.kinds.model.apikey import key_variable


@pytest.mark.parametrize(
    ("base_url", "named", "sent"),
    [
        ("https://api.openai.com/v1", None, "OPENAI_API_KEY"),
        ("https://API.OpenAI.com/v1/", None, "OPENAI_API_KEY"),
        ("http://api.openai.com/v1", None, None),  # plain http: anyone on the way reads it
        ("https://api.openai.com.evil.example/v1", None, None),
        ("https://evil.example/api.openai.com/v1", None, None),
        ("https://user@api.openai.com@evil.example/v1", None, None),
        ("http://localhost:11434/v1", None, None),
        ("http://localhost:11434/v1", "OPENAI_API_KEY", "OPENAI_API_KEY"),
        ("https://api.openai.com/v1", "MY_KEY", "MY_KEY"),
    ],
)
def test_the_key_goes_only_where_it_is_named_or_to_openai(
    base_url: str, named: str | None, sent: str | None
) -> None:
    assert key_variable(base_url, named) == sent
