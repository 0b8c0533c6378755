"""Fixtures shared by every test: this process reaps the orphans of the hooks it runs."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hookgate.hooks import adopt_orphans
from hookgate.hooks.process.guard import GUARD_GRACE

#: Seconds a killed process group may take to disappear from /proc entirely.
GROUP_GONE_WAIT = 1.0
#: Seconds a child of a hookgate killed outright may live on: the guardian's grace
#: between SIGTERM and SIGKILL, and room for a loaded machine.
OUTLIVE_KILL_S = GUARD_GRACE + 5.0


@pytest.fixture(scope="session", autouse=True)
def _scratch_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """hookgate's home (trust store, sessions, parse cache) in a scratch folder for every
    test that does not name its own: the suite must not write into the user's."""
    os.environ["HOOKGATE_HOME"] = str(tmp_path_factory.mktemp("hookgate-home"))


@pytest.fixture(scope="session", autouse=True)
def _signals_as_on_a_terminal() -> None:
    """The hookgate processes the tests start get SIGHUP and SIGINT at their default,
    wherever the suite runs: under `nohup` (SIGHUP), or as a background job of a
    script (SIGINT), they would inherit them ignored, and then rightly ignore them
    (`runtime.interrupts`). This process still ignores them: a handler that does
    nothing is reset to the default in a child by exec(2), where an ignored signal stays
    ignored."""
    for signum in (signal.SIGHUP, signal.SIGINT):
        if signal.getsignal(signum) is signal.SIG_IGN:
            signal.signal(signum, lambda signum, frame: None)


@pytest.fixture(scope="session", autouse=True)
def _reap_orphans() -> None:
    """Make the test process the subreaper of its descendants, as a hook runner must be.

    A killed grandchild of a hook is reparented to us and reaped by the engine;
    without this, in a container whose PID 1 never reaps, it would stay a zombie.
    """
    adopt_orphans()


def group_members(pgid: int) -> dict[int, str]:
    """Every process of group `pgid`, by pid, with its state letter (Z for a zombie)."""
    members: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # gone while we looked
        # Field 2 (comm) may hold spaces and parentheses: split after its closing one.
        fields = text[text.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])  # fields 3 and 5 of stat(5)
        if pgrp == pgid:
            members[int(stat.parent.name)] = state
    return members


def assert_group_gone(pgid: int) -> None:
    """Fail unless no process of group `pgid` is left, zombies included.

    A zombie may linger for a moment while its reaper runs; it has `GROUP_GONE_WAIT`
    seconds to go. A live process fails the same way once that time is up.
    """
    deadline = time.monotonic() + GROUP_GONE_WAIT
    while members := group_members(pgid):
        if time.monotonic() > deadline:
            pytest.fail(f"process group {pgid} outlived its hook: {members} (pid: state)")
        time.sleep(0.02)


@pytest.fixture
def group_gone() -> Callable[[int], None]:
    """`group_gone(pgid)` asserts that nothing of that process group is left."""
    return assert_group_gone


@pytest.fixture
def read_pid() -> Callable[[Path], int]:
    """`read_pid(path)`: the pid a hook wrote there with `echo $$ > path`."""

    def read(path: Path) -> int:
        text = path.read_text().split()
        assert text, f"the hook wrote no pid to {path}"
        return int(text[0])

    return read


def _pid_alive(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2] != "Z"


@pytest.fixture
def pid_alive() -> Callable[[int], bool]:
    """`pid_alive(pid)`: whether that process exists and is not a zombie."""
    return _pid_alive


def wait_outlived(pid: int) -> None:
    """Wait until `pid`, a child of a hookgate killed outright, has exited, and reap it:
    it was reparented to this test process, the subreaper."""
    deadline = time.monotonic() + OUTLIVE_KILL_S
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:  # not ours: gone once /proc no longer has it
            if not Path(f"/proc/{pid}").exists():
                return
        time.sleep(0.02)
    pytest.fail(f"process {pid} outlived hookgate by more than {OUTLIVE_KILL_S} s")


@pytest.fixture
def outlived() -> Callable[[int], None]:
    """`outlived(pid)` waits (boundedly) for a process that hookgate's death must end."""
    return wait_outlived
