"""The service's clients: bearer tokens, each with the name its decisions are audited under.

A token file holds one `NAME TOKEN` a line (blank lines and `#` comments skipped);
`HOOKGATE_SERVE_TOKEN` adds one client named `default`. A request names its client
with `Authorization: Bearer TOKEN`; tokens are compared in constant time.
"""

from __future__ import annotations

import hmac
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks import ConfigError

#: The variable that holds the one client's token where there is no token file.
TOKEN_VARIABLE = "HOOKGATE_SERVE_TOKEN"
#: The name that client is audited under.
DEFAULT_CLIENT = "default"
#: Characters a token must have at least: a guessable token guards nothing.
MIN_TOKEN = 16
_NAME = re.compile(r"[A-Za-z0-9_.@-]+\Z")


class Tokens:
    """Token → client name."""

    def __init__(self, clients: Mapping[str, str]) -> None:
        self._clients = dict(clients)

    def __len__(self) -> int:
        return len(self._clients)

    def client_of(self, authorization: str | None) -> str | None:
        """The client an `Authorization` header names, or None (no, or no known, token)."""
        if not authorization or not authorization.startswith("Bearer "):
            return None
        given = authorization[len("Bearer ") :].strip().encode()
        found = None
        for token, name in self._clients.items():  # every one compared: no early exit
            if hmac.compare_digest(token.encode(), given):
                found = name
        return found


def load_tokens(path: Path | None, environ: Mapping[str, str]) -> Tokens:
    """The clients of `path` (a token file) and of `HOOKGATE_SERVE_TOKEN`; `ConfigError`
    for a bad line, naming the file and line, or where there is no client at all."""
    clients: dict[str, str] = {}
    if path is not None:
        clients.update(_read(path))
    if token := environ.get(TOKEN_VARIABLE, "").strip():
        _check_token(token, f"${TOKEN_VARIABLE}")
        clients.setdefault(token, DEFAULT_CLIENT)
    if not clients:
        raise ConfigError(
            "hookgate serve answers only clients with a token, and none is given",
            hint=f"--token-file FILE (one 'NAME TOKEN' a line) or {TOKEN_VARIABLE}",
        )
    return Tokens(clients)


def _read(path: Path) -> dict[str, str]:
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the token file: {exc}") from exc
    if mode & 0o077:
        raise ConfigError(
            f"{path}: the token file may be read or written by others (mode "
            f"{stat.S_IMODE(mode):04o}): whoever reads a token decides as its client",
            hint=f"chmod 600 {path}",
        )
    clients: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        where = f"{path}:{number}"
        if len(words) != 2 or not _NAME.match(words[0]):
            raise ConfigError(
                f"{where}: expected 'NAME TOKEN', got {len(words)} word(s) starting {words[0]!r}",
                hint="one client a line: its name (letters, digits, _.@-), a space, its token",
            )
        _check_token(words[1], f"{where}: the token of {words[0]!r}")
        if words[1] in clients:
            raise ConfigError(f"{where}: the token of {words[0]!r} is {clients[words[1]]!r}'s too")
        clients[words[1]] = words[0]
    return clients


def _check_token(token: str, where: str) -> None:
    if len(token) < MIN_TOKEN:
        raise ConfigError(
            f"{where} has {len(token)} characters, fewer than {MIN_TOKEN}",
            hint="make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'",
        )
