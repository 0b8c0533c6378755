"""What an http hook is: its `http:` mapping, validated, and the headers it sends.

Header values name environment variables (`$VAR`, `${VAR}`) only from the hook's own
`env_allowlist`: anything else is a config error, so an agent file cannot send the
user's secrets to a URL of its choosing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from hookgate.hooks.errors import HookgateError
from hookgate.hooks.files.yamlfile import Where, check_keys, describe, expect_mapping

HTTP_KEYS = ("url", "headers", "env_allowlist")
#: `$NAME` or `${NAME}` in a header value: an environment variable sent to the URL.
ENV_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: A header name as HTTP defines it (a token).
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_JSON = "application/json"


class HttpHookError(HookgateError):
    """The policy service did not answer with a 2xx and a body we can read."""


@dataclass(frozen=True)
class HttpTarget:
    """Where an http hook POSTs the event, and the headers it sends (values unexpanded)."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()
    env_allowlist: tuple[str, ...] = ()

    def sent_variables(self) -> tuple[str, ...]:
        """The environment variables the headers send, in order of first use."""
        names = (name for _, value in self.headers for name in env_references(value))
        return tuple(dict.fromkeys(names))

    def resolve_headers(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The headers with every `$VAR` replaced; an unset variable is `HttpHookError`."""

        def value_of(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(2)
            if name not in environ:
                raise HttpHookError(f"environment variable {name} is not set (a header sends it)")
            return environ[name]

        headers = {"content-type": _JSON, "accept": _JSON}
        headers.update((key, ENV_REFERENCE.sub(value_of, value)) for key, value in self.headers)
        return headers


def env_references(value: str) -> Iterator[str]:
    """The variable names `value` refers to."""
    for match in ENV_REFERENCE.finditer(value):
        yield match.group(1) or match.group(2)


def parse_http_target(node: Any, at: Where) -> HttpTarget:
    """Validate a hook's `http:` mapping found at `at`."""
    value = expect_mapping(node, at, "a mapping with url, headers, env_allowlist")
    check_keys(value, at, HTTP_KEYS)
    if "url" not in value:
        raise at.error(
            "an http hook needs a url", hint="http: {url: 'https://policy.example/hook'}"
        )
    allowlist = _env_allowlist(value, at)
    return HttpTarget(
        url=_url(value, at), headers=_headers(value, at, allowlist), env_allowlist=allowlist
    )


def _url(node: Mapping[Any, Any], where: Where) -> str:
    url = node["url"]
    if not isinstance(url, str) or not url.strip() or "\x00" in url:
        raise where.key(node, "url").error(f"expected a non-empty string, got {describe(url)}")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise where.key(node, "url").error(
            f"expected an http:// or https:// URL with a host, got {url!r}",
            hint="url: https://policy.example/hook",
        )
    return url.strip()


def _env_allowlist(node: Mapping[Any, Any], where: Where) -> tuple[str, ...]:
    value = node.get("env_allowlist", [])
    at = where.key(node, "env_allowlist")
    if not isinstance(value, list):
        raise at.error(f"expected a list of variable names, got {describe(value)}",
                       hint="env_allowlist: [POLICY_TOKEN]")  # fmt: skip
    for index, name in enumerate(value):
        if not isinstance(name, str) or not _VARIABLE.match(name):
            raise at.item(value, index).error(f"invalid variable name {name!r}")
    return tuple(value)


def _headers(
    node: Mapping[Any, Any], where: Where, allowlist: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    value = node.get("headers", {})
    at = where.key(node, "headers")
    if not isinstance(value, Mapping):
        raise at.error(f"expected a mapping of header names to strings, got {describe(value)}")
    headers: list[tuple[str, str]] = []
    for key, item in value.items():
        here = at.key(value, key)
        if not isinstance(key, str) or not _HEADER_NAME.match(key):
            raise here.error(f"invalid header name {key!r}")
        if not isinstance(item, str) or any(c in item for c in "\r\n\x00"):
            raise here.error(f"expected a one-line string, got {describe(item)}")
        # An agent file must not send the user's secrets to a URL of its choosing:
        # only variables the hook lists itself are expanded.
        for name in env_references(item):
            if name not in allowlist:
                raise here.error(
                    f"header {key!r} sends ${name}, which env_allowlist does not list",
                    hint=f"add {name} to http.env_allowlist if this URL may receive it",
                )
        headers.append((key, item))
    return tuple(headers)
