"""`TrustCache`: an unchanged closure costs a `stat` of each file, and any change to a
file it rests on (an edit that keeps the size and the mtime, a new file in the place
of one, a file that was absent appearing, the store forgetting the file) is refused
as `load_trusted` refuses it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from hookgate.security.trust.cache import TrustCache
from hookgate.security.trust.check import Untrusted
from hookgate.security.trust.record import trust_agent_file
from hookgate.security.trust.store import TrustStore


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    """A trusted agent file with one hook script."""
    script = tmp_path / "guard.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    agent_file = tmp_path / "hookgate.yaml"
    hooks = {"preToolCall": [{"name": "guard", "command": "./guard.sh", "onError": "fail"}]}
    agent_file.write_text(json.dumps({"hooks": hooks}))
    trust_agent_file(agent_file, store=TrustStore(tmp_path / "home"))
    return agent_file


def settled_cache(agent_file: Path) -> TrustCache:
    """A cache that has remembered `agent_file` (its files count as settled at once)."""
    cache = TrustCache(TrustStore(agent_file.parent / "home"), settle_ns=0)
    for _ in range(3):
        cache.load(agent_file)
    return cache


def test_an_unchanged_closure_is_checked_in_full_only_until_it_is_remembered(
    agent: Path,
) -> None:
    cache = settled_cache(agent)
    checks = cache.checks
    first = cache.load(agent)
    for _ in range(20):
        assert cache.load(agent) is first
    assert (checks, cache.checks) == (2, 2)  # the first guesses the files; the second keeps


def keep_size_and_mtime(path: Path, text: str) -> None:
    """Rewrite `path` with `text` of the same length, and put its mtime back."""
    before = path.stat()
    old = path.read_text()
    assert len(text) == len(old)
    assert text != old
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def edit_script(agent_file: Path) -> None:
    keep_size_and_mtime(agent_file.parent / "guard.sh", "#!/bin/sh\nexit 1\n")


def edit_agent_file(agent_file: Path) -> None:
    text = agent_file.read_text()
    keep_size_and_mtime(agent_file, text.replace('"fail"', '"warn"'))


def replace_script(agent_file: Path) -> None:
    script = agent_file.parent / "guard.sh"
    other = agent_file.parent / "other.sh"
    other.write_text("#!/bin/sh\nexit 7\n")
    os.replace(other, script)


def revoke(agent_file: Path) -> None:
    TrustStore(agent_file.parent / "home").revoke(agent_file.resolve())


@pytest.mark.parametrize(
    "change", [edit_script, edit_agent_file, replace_script, revoke], ids=lambda f: f.__name__
)
def test_a_change_after_the_closure_is_remembered_is_refused(
    agent: Path, change: Callable[[Path], None]
) -> None:
    cache = settled_cache(agent)
    change(agent)
    with pytest.raises(Untrusted):
        cache.load(agent)
    with pytest.raises(Untrusted):  # and stays refused: a refusal is not remembered
        cache.load(agent)


def test_a_file_trusted_as_absent_that_appears_is_refused(tmp_path: Path) -> None:
    (tmp_path / "guardmod.py").write_text("def check(event):\n    return None\n")
    agent_file = tmp_path / "hookgate.yaml"
    hooks = {"preToolCall": [{"name": "g", "python": "guardmod:check", "onError": "fail"}]}
    agent_file.write_text(json.dumps({"hooks": hooks}))
    trust_agent_file(agent_file, store=TrustStore(tmp_path / "home"))
    cache = settled_cache(agent_file)
    (tmp_path / "guardmod").mkdir()  # a package now shadows the trusted module
    (tmp_path / "guardmod" / "__init__.py").write_text("def check(event):\n    return None\n")
    with pytest.raises(Untrusted, match=r"guardmod/__init__\.py"):
        cache.load(agent_file)


def test_a_change_trusted_anew_loads_the_new_version(agent: Path) -> None:
    cache = settled_cache(agent)
    old_config, _ = cache.load(agent)
    edit_agent_file(agent)
    trust_agent_file(agent, store=TrustStore(agent.parent / "home"))
    config, trusted = cache.load(agent)
    assert config is not old_config
    assert '"warn"' in trusted.text


def test_a_file_changed_just_now_is_hashed_again_until_it_settles(agent: Path) -> None:
    hour = 3600 * 10**9  # the files were written within it
    cache = TrustCache(TrustStore(agent.parent / "home"), settle_ns=hour)
    for _ in range(5):
        cache.load(agent)
    assert cache.checks == 5
