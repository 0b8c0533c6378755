"""What a `hookgate serve` worker keeps between requests, and nothing a client sends.

`WarmAgent` is the worker's `hookrun.Keeper`: the service's agent file checked by a
`stat` of its closure while nothing changed (`trust.cache`), a change checked in full
(and refused as ever); each hook's pins with what they verified; one process per
persistent hook, started at its first event and restarted if it dies (as in a
session); and each agent session's audit file, looked up once. A policy that is
trusted anew (other bytes) is a new generation: its persistent hooks are new
processes, and the old generation's are stopped once its last request is answered.
`close` stops them all when the worker shuts down.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hookgate.agents.audit import AuditTrail, KeptAuditTrail
from hookgate.agents.hookrun import Loaded
from hookgate.hooks.kinds.persistent.run import PersistentHooks
from hookgate.hooks.runs.pins import SessionPins
from hookgate.security.trust.cache import TrustCache
from hookgate.security.trust.check import TrustedAgent


class _Generation:
    """One trusted version of the agent file, and the requests that use it now."""

    def __init__(self, loaded: Loaded) -> None:
        self.loaded = loaded
        self.users = 0
        self.retired = False


class WarmAgent:
    """The worker's `Keeper`: `loaded(path)` for the length of a request; `close()`."""

    def __init__(self, trust: TrustCache | None = None) -> None:
        self.audit: AuditTrail = KeptAuditTrail()
        self._trust = trust or TrustCache()
        self._lock = threading.Lock()
        #: The version in use of each agent file (the service has one).
        self._current: dict[Path, _Generation] = {}
        self._closed = False

    @contextmanager
    def loaded(self, path: Path) -> Iterator[Loaded]:
        """The agent file as checked now, with the parts kept for its trusted version;
        raises as `load_trusted` raises."""
        generation = self._lease(path)
        try:
            yield generation.loaded
        finally:
            with self._lock:
                generation.users -= 1
                done = generation.retired and not generation.users
            if done:
                _stop(generation)

    def close(self) -> None:
        """Stop the persistent hooks' processes (a request still answered stops those it
        uses when it is done, as does one that comes after)."""
        with self._lock:
            self._closed = True
            generations, self._current = list(self._current.values()), {}
            idle = [g for g in generations if self._retire(g)]
        for generation in idle:
            _stop(generation)

    def _lease(self, path: Path) -> _Generation:
        config, trusted = self._trust.load(path)
        with self._lock:
            current = self._current.get(path)
            if current is None or not _same(current.loaded, trusted):
                current, retired = self._renew(path, Loaded(config, trusted)), current
                stop = retired is not None and self._retire(retired)
            else:  # the same version checked anew: compared by identity from now on
                current.loaded, stop = current.loaded._replace(trusted=trusted), False
            current.users += 1
        if stop and retired is not None:
            _stop(retired)
        return current

    def _renew(self, path: Path, loaded: Loaded) -> _Generation:
        """A generation for a newly trusted version (under the lock)."""
        config, trusted = loaded.config, loaded.trusted
        base_dir = Path(os.path.dirname(os.path.abspath(config.hooks.source)))
        kept = loaded._replace(
            pins=SessionPins(trusted.pins(), base_dir), persistent=PersistentHooks()
        )
        generation = _Generation(kept)
        if self._closed:  # shutting down: its processes end with its request
            generation.retired = True
        else:
            self._current[path] = generation
        return generation

    @staticmethod
    def _retire(generation: _Generation) -> bool:
        """Mark it retired (under the lock); whether no request uses it now."""
        generation.retired = True
        return not generation.users


def _same(kept: Loaded, trusted: TrustedAgent) -> bool:
    """Whether `trusted` is the version `kept` was made for: the very object while the
    cache holds it, else the same entry and bytes (a check after a `stat` changed)."""
    if kept.trusted is trusted:
        return True
    return kept.trusted.text == trusted.text and kept.trusted.entry.digest() == (
        trusted.entry.digest()
    )


def _stop(generation: _Generation) -> None:
    if generation.loaded.persistent is not None:
        generation.loaded.persistent.close()
