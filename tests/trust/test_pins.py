"""A pinned file's `stat` vouches for its bytes only once its last change has settled.

`FilePins.check` re-hashes a file when its `stat` changed; a write in the same tick of
the file system's clock as the check keeps every time in the `stat` (and an edit of
the same size keeps the size), so a file changed within `RACY_NS` of a check is hashed
again at the next one. Counted: the hashes each check makes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hookgate.hooks.runs import pins
from hookgate.hooks.runs.pins import FilePins, UnpinnedFile, file_digest


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths `FilePins` hashes, in order."""
    seen: list[str] = []
    real = pins.file_digest

    def counted(path: str | os.PathLike[str]) -> str | None:
        seen.append(str(path))
        return real(path)

    monkeypatch.setattr(pins, "file_digest", counted)
    return seen


def script(tmp_path: Path, text: str = "echo trusted\n") -> Path:
    path = tmp_path / "guard.sh"
    path.write_text(text)
    return path


def test_a_file_changed_just_now_is_hashed_at_every_check(
    tmp_path: Path, hashes: list[str]
) -> None:
    path = script(tmp_path)
    checked = FilePins({str(path): file_digest(path)})

    for _ in range(3):
        checked.check(path)

    assert hashes == [str(path)] * 3


def test_a_settled_file_is_hashed_once_then_its_stat_vouches(
    tmp_path: Path, hashes: list[str]
) -> None:
    path = script(tmp_path)
    checked = FilePins({str(path): file_digest(path)}, settle_ns=0)

    for _ in range(3):
        checked.check(path)

    assert hashes == [str(path)]


def test_an_edit_of_the_same_size_with_its_mtime_put_back_is_refused(tmp_path: Path) -> None:
    """Right after a check, as a racing writer would: the same size, the mtime put
    back; within the clock's tick even the ctime may read the same."""
    path = script(tmp_path)
    checked = FilePins({str(path): file_digest(path)})
    checked.check(path)
    before = path.stat()

    path.write_text("echo hostile\n"[: len("echo trusted\n")].ljust(len("echo trusted\n")))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    with pytest.raises(UnpinnedFile, match="changed since the session started"):
        checked.check(path)
