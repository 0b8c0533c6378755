"""`load_trusted` for a long-lived process: checked by a `stat` while nothing changed.

`TrustCache.load` answers what `check.load_trusted` answers, and remembers it with the
`stat` of every file it rests on: the trust store, the agent file and every file of its
closure (those trusted as absent too). While each still has the same device, inode,
size, mtime and ctime, the next load is those `stat`s alone; any difference, and the
check runs in full again, so a changed file is refused as `load_trusted` refuses it.
The ctime is in the key because no one can set it (`touch` and `utime` set the mtime
only): an edit that keeps the size and puts the mtime back still changes it. Each
`stat` is taken before the bytes are read and hashed, so a write between the two is
seen at the next load; and a file whose ctime is within `RACY_NS` of the check is not
remembered at all (a second write in the same clock tick would keep the ctime: git's
"racy clean" case), so it is hashed again until it has been still for that long.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from hookgate.config.agentfile import AgentConfig
from hookgate.hooks.records import NamedTuple
from hookgate.hooks.runs.pins import RACY_NS
from hookgate.security.trust.check import TrustedAgent, load_trusted
from hookgate.security.trust.store import TrustStore

#: What a `stat` says of a file's identity and version; None: no such file.
StatKey = tuple[int, int, int, int, int] | None


class _Kept(NamedTuple):
    paths: tuple[str, ...]
    keys: tuple[StatKey, ...]
    loaded: tuple[AgentConfig, TrustedAgent]


class TrustCache:
    """`load_trusted(agent_file)`, remembered per agent file while no file it rests on
    changed. Safe to share between threads. `settle_ns`: how long ago a file's last
    change must be for its `stat` to vouch for it (`RACY_NS`)."""

    def __init__(self, store: TrustStore | None = None, *, settle_ns: int = RACY_NS) -> None:
        self.store = store or TrustStore()
        self.settle_ns = settle_ns
        self._kept: dict[Path, _Kept] = {}
        self._lock = threading.Lock()
        #: Full checks made (the first, and one after each change): for tests and benches.
        self.checks = 0

    def load(self, agent_file: Path) -> tuple[AgentConfig, TrustedAgent]:
        """The agent file's config and trust, as `load_trusted` gives them; raises as it
        raises (`Untrusted`, `ConfigError`), and then remembers nothing."""
        with self._lock:
            kept = self._kept.get(agent_file)
            if kept is not None and stat_keys(kept.paths) == kept.keys:
                return kept.loaded
            self._kept.pop(agent_file, None)
            # The files the last check rested on, stat'ed before this one reads them; a
            # first check (or one whose closure changed) is not remembered: the next is.
            paths = kept.paths if kept is not None else (str(self.store.path), str(agent_file))
            keys = stat_keys(paths)
            self.checks += 1
            loaded = load_trusted(agent_file, store=self.store)
            rests_on = (str(self.store.path), str(agent_file), *loaded[1].entry.files)
            settled = time.time_ns() - self.settle_ns
            if rests_on == paths and all(key is None or key[4] <= settled for key in keys):
                self._kept[agent_file] = _Kept(paths, keys, loaded)
            else:  # the files to stat first next time; no keys: never a hit
                self._kept[agent_file] = _Kept(rests_on, (), loaded)
            return loaded


def stat_keys(paths: Iterable[str]) -> tuple[StatKey, ...]:
    """Each path's (device, inode, size, mtime, ctime), None where there is no file."""
    keys: list[StatKey] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            keys.append(None)
            continue
        keys.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(keys)
