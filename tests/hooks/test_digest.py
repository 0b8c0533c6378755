"""`hookgate.hooks.files.digest.sha256` is sha256: trust entries written by either agree."""

from __future__ import annotations

import hashlib

import pytest

from hookgate.hooks.files.digest import sha256


@pytest.mark.parametrize("data", [b"", b"model: scripted:replies.yaml\n", bytes(range(256)) * 300])
def test_the_digest_is_hashlibs_sha256(data: bytes) -> None:
    chunked = sha256()
    for start in range(0, len(data), 4096):
        chunked.update(data[start : start + 4096])
    assert sha256(data).hexdigest() == chunked.hexdigest() == hashlib.sha256(data).hexdigest()
