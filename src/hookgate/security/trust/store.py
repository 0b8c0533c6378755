"""The trust store: `$HOOKGATE_HOME/trust.json`, the digests of each trusted closure.

One entry per agent file (asked agents' files get entries of their own): each file of
its closure with its role and sha256 (null: trusted as absent). Written whole, 0600,
through a temporary file and a rename, so a reader sees the old store or the new one.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks import ConfigError
from hookgate.hooks.files.digest import sha256
from hookgate.hooks.records import NamedTuple
from hookgate.store.home import default_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STORE_NAME = "trust.json"
STORE_MODE = 0o600
_VERSION = 1


class TrustedFile(NamedTuple):
    role: str
    sha256: str | None
    """None: the file was absent when trusted, and must stay so."""


class TrustEntry(NamedTuple):
    """What was trusted of one agent file: each file of its closure, by absolute path."""

    files: Mapping[str, TrustedFile]
    trusted_at: str = ""

    def digest(self) -> str:
        """One sha256 over the whole entry: equal digests, equal closures."""
        canonical = json.dumps(
            sorted((path, f.role, f.sha256) for path, f in self.files.items()), ensure_ascii=True
        )
        return sha256(canonical.encode()).hexdigest()


def store_path(home: Path | None = None) -> Path:
    return (home if home is not None else default_home()) / STORE_NAME


class TrustStore:
    """The store at `home` (default `$HOOKGATE_HOME`): read on demand, written atomically."""

    def __init__(self, home: Path | None = None) -> None:
        self.path = store_path(home)

    def entries(self) -> dict[str, TrustEntry]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot read the trust store: {exc}") from exc
        try:
            return _parse(json.loads(text))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(
                f"{self.path}: the trust store is damaged ({exc})",
                hint=f"remove it and trust your agent files again: rm {self.path}",
            ) from exc

    def entry(self, agent_file: Path) -> TrustEntry | None:
        return self.entries().get(str(agent_file))

    def record(self, entries: Mapping[Path, TrustEntry]) -> None:
        """Add or replace the entries of these agent files."""
        from datetime import UTC, datetime  # here: the check on every start never writes

        now = datetime.now(UTC).isoformat(timespec="seconds")
        merged = self.entries()
        for agent_file, entry in entries.items():
            merged[str(agent_file)] = TrustEntry(entry.files, now)
        self._write(merged)

    def revoke(self, agent_file: Path) -> bool:
        """Forget `agent_file`; False when it was not trusted."""
        entries = self.entries()
        if entries.pop(str(agent_file), None) is None:
            return False
        self._write(entries)
        return True

    def _write(self, entries: Mapping[str, TrustEntry]) -> None:
        document = {
            "version": _VERSION,
            "agents": {
                agent: {
                    "trusted_at": entry.trusted_at,
                    "files": {
                        p: {"role": f.role, "sha256": f.sha256} for p, f in entry.files.items()
                    },
                }
                for agent, entry in sorted(entries.items())
            },
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _write_atomically(self.path, json.dumps(document, indent=2) + "\n")
        except OSError as exc:
            raise ConfigError(
                f"cannot write the trust store {self.path}: {exc}",
                hint="set HOOKGATE_HOME to a writable directory",
            ) from exc


def _write_atomically(path: Path, text: str) -> None:
    import tempfile  # here: the check on every start never writes

    descriptor, temporary = tempfile.mkstemp(prefix=".trust-", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:  # mkstemp makes it 0600
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, STORE_MODE)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _parse(document: Any) -> dict[str, TrustEntry]:
    if document.get("version") != _VERSION:
        raise ValueError(f"unknown version {document.get('version')!r}")
    entries: dict[str, TrustEntry] = {}
    for agent, entry in document["agents"].items():
        files = {
            str(path): TrustedFile(
                str(f["role"]), None if f["sha256"] is None else str(f["sha256"])
            )
            for path, f in entry["files"].items()
        }
        entries[str(agent)] = TrustEntry(files, str(entry.get("trusted_at", "")))
    return entries
