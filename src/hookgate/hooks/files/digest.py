"""`sha256`, without loading OpenSSL: importing `hashlib` loads libcrypto, about 3 ms of
CPU, a quarter of a bare interpreter's start-up, which every command that hashes a
config file or a call id would pay. CPython's own sha256 module is the one `hashlib`
falls back to; the digests are the same.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:  # CPython 3.12 renamed it; another Python: hashlib's
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256

__all__ = ["sha256"]
