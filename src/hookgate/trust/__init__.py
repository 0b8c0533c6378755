"""Trust: nothing an agent file names runs until its owner trusts it, as it was then.

`closure_of` finds the files an agent file makes hookgate run or read; `TrustStore`
keeps their digests under `$HOOKGATE_HOME`; `require_trust` is the check every entry
point makes first; `trust_agent_file` records a closure.
"""

from hookgate.trust.check import (
    TrustedAgent,
    Untrusted,
    asked_digests,
    is_trusted,
    load_trusted,
    require_trust,
    trust_agent_file,
)
from hookgate.trust.closure import Closure, closure_of
from hookgate.trust.store import TrustEntry, TrustStore

__all__ = [
    "Closure",
    "TrustEntry",
    "TrustStore",
    "TrustedAgent",
    "Untrusted",
    "asked_digests",
    "closure_of",
    "is_trusted",
    "load_trusted",
    "require_trust",
    "trust_agent_file",
]
