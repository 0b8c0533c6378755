"""Recording trust: the digests of an agent file's closure, as it is now, in the store.

`hookgate trust`, line mode's inline question, `init` and `demo` call it; the check
on every start (`check`) does not import it.
"""

from __future__ import annotations

from pathlib import Path

from hookgate.hooks.runs.pins import file_digest
from hookgate.security.trust.closure import Closure, closure_of
from hookgate.security.trust.store import TrustedFile, TrustEntry, TrustStore


def trust_agent_file(agent_file: Path, *, store: TrustStore | None = None) -> Closure:
    """Record the closure of `agent_file` as trusted, with one entry per agent file in it."""
    closure = closure_of(agent_file)
    (store or TrustStore()).record(entries_of(closure))
    return closure


def entries_of(closure: Closure) -> dict[Path, TrustEntry]:
    """The store entries of `closure`, its files hashed now: hash before you ask, so that
    what is recorded is what was shown, not what a file became while the owner read."""
    digests = {path: TrustedFile(role, file_digest(path)) for path, role in closure.files.items()}
    entries: dict[Path, TrustEntry] = {}
    for config in closure.agents:
        own = closure_of(config.path) if config is not closure.root else closure
        entries[config.path] = TrustEntry({str(p): digests[p] for p in own.files})
    return entries
