"""The check every entry point makes before it runs or sends anything an agent file names.

`require_trust` reads the agent file once, and passes only when the store holds an
entry for it whose every file still has its trusted digest. It reads no YAML and
hashes a handful of small files: it is cheap. Otherwise `Untrusted` names the file,
what changed and the command that trusts it. Recording is `record.trust_agent_file`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from hookgate.config.agentfile import AgentConfig, AgentRef, load_agent_file
from hookgate.hooks import ConfigError
from hookgate.hooks.files.digest import sha256
from hookgate.hooks.files.yamlfile import read_file
from hookgate.hooks.records import NamedTuple
from hookgate.hooks.runs.pins import file_digest
from hookgate.security.trust.store import TrustEntry, TrustStore


class Untrusted(ConfigError):
    """The agent file, or a file of its closure, is not what its owner trusted."""


class TrustedAgent(NamedTuple):
    """An agent file that passed the check: its text as read and hashed, and its entry."""

    path: Path
    text: str
    entry: TrustEntry

    def pins(self) -> dict[str, str | None]:
        """Every file of the closure with its trusted digest, for `HookEngine(pinned=...)`."""
        return {path: file.sha256 for path, file in self.entry.files.items()}

    def protected_files(self, store: TrustStore) -> frozenset[Path]:
        """The closure and the store, symlinks resolved: what file tools never write."""
        paths = {Path(os.path.realpath(path)) for path in self.entry.files}
        return frozenset({*paths, Path(os.path.realpath(store.path))})

    def environments(self) -> set[Path]:
        """The folders of packages the closure's hooks run from (`environments`)."""
        from hookgate.hooks.runs.environments import environments

        return environments([Path(path) for path in self.entry.files], self.path.parent)


def require_trust(
    agent_file: Path, *, store: TrustStore | None = None, expect_digest: str | None = None
) -> TrustedAgent:
    """The agent file's text, once its closure is checked against the store.

    `expect_digest`: the entry digest an asking agent pinned at its session start;
    a hand-off child passes it so it runs what its asker trusted, not a later edit.
    """
    store = store or TrustStore()
    path = agent_file.resolve()
    data = _read(agent_file)  # the same bytes; a refusal names the file as it was given
    hint = f"review it, then run: hookgate trust {path}"
    entry = store.entry(path)
    if entry is None:
        raise Untrusted(
            f"{path} is not trusted: hookgate runs nothing it names until you trust it",
            hint=hint,
        )
    changes = _changes(path, data, entry)
    if changes:
        raise Untrusted(f"{path} is not trusted: " + "; ".join(changes), hint=hint)
    if expect_digest is not None and entry.digest() != expect_digest:
        raise Untrusted(
            f"{path} was trusted anew after the asking agent's session started; "
            "it runs in the asker's next session",
            hint="start a new session of the asking agent",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    return TrustedAgent(path, text, entry)


def load_trusted(
    agent_file: Path, *, store: TrustStore | None = None, expect_digest: str | None = None
) -> tuple[AgentConfig, TrustedAgent]:
    """`require_trust`, then the agent file parsed from the very bytes that were checked.

    An untrusted file that is also broken says what is broken first (found by parsing
    alone, which runs and imports nothing): trusting it could not help.
    """
    try:
        trusted = require_trust(agent_file, store=store, expect_digest=expect_digest)
    except Untrusted:
        from hookgate.security.trust.closure import closure_of  # the refusal's path only

        closure_of(agent_file)  # raises the file's own ConfigError, if it has one
        raise
    return load_agent_file(trusted.path, text=trusted.text), trusted


def asked_digests(
    agents: Mapping[str, AgentRef], store: TrustStore | None = None
) -> dict[str, str]:
    """Each asked agent's (or team member's) trust entry digest now, by name: the
    hand-off pins."""
    entries = (store or TrustStore()).entries()
    return {
        name: entries[str(ref.file)].digest()
        for name, ref in agents.items()
        if str(ref.file) in entries
    }


def is_trusted(agent_file: Path, *, store: TrustStore | None = None) -> bool:
    try:
        require_trust(agent_file, store=store)
    except ConfigError:
        return False
    return True


def _read(path: Path) -> bytes:
    try:
        return read_file(path)
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no such file",
            hint="create one with 'hookgate init', or name another with --agent",
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc


def _changes(path: Path, data: bytes, entry: TrustEntry) -> list[str]:
    """What differs from the entry, in plain words, without any file's content."""
    changes = []
    for name, trusted in entry.files.items():
        now = sha256(data).hexdigest() if name == str(path) else file_digest(name)
        if now == trusted.sha256:
            continue
        if trusted.sha256 is None:
            changes.append(f"new {trusted.role} {name}")
        elif now is None:
            changes.append(f"{trusted.role} {name} is gone")
        else:
            changes.append(f"{trusted.role} {name} changed since you trusted it")
    return changes
