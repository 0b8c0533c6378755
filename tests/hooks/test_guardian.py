"""The guardian: what a process that ran hooks leaves behind when it ends, cleanly or not.

Each test runs an owner: a Python child that marks a `sleep` (in a session of its own,
as a hook's daemon would be) with its guard token, then ends one way or another.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

OWNER = """
import os, signal, subprocess, sys
from hookgate.hooks.process import guard
given, _ = os.pipe()  # an fd we were handed, inheritable: the guardian must not hold it
os.set_inheritable(given, True)
daemon = subprocess.Popen(["sleep", "60"], env=guard.guarded(os.environ), start_new_session=True,
                          stdout=subprocess.DEVNULL)
print(daemon.pid, guard._guardian[0], flush=True)
sys.stdin.readline()
if sys.argv[1] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
"""


def start_owner(ending: str) -> tuple[subprocess.Popen[str], int, int]:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, ending], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert owner.stdout is not None
    daemon, guardian = (int(pid) for pid in owner.stdout.readline().split())
    return owner, daemon, guardian


def test_the_guardian_at_rest_is_a_shell_not_a_second_interpreter() -> None:
    """Every `hooks fire` and session pays for starting it: a shell, not Python."""
    owner, daemon, guardian = start_owner("clean")
    try:
        exe = os.path.realpath(f"/proc/{guardian}/exe")
        assert exe != os.path.realpath(sys.executable)
        assert os.path.basename(exe) in {"dash", "bash", "sh", "busybox"}
    finally:
        owner.communicate("go\n")
        os.kill(daemon, signal.SIGKILL)


def test_the_guardian_holds_no_fd_but_its_pipe_and_dev_null() -> None:
    """An inheritable fd the owner was given (a caller's pipe) stays out of the guardian:
    it would keep that pipe open for as long as the guardian lives."""
    owner, daemon, guardian = start_owner("clean")
    try:
        held = {
            os.readlink(f"/proc/{guardian}/fd/{fd}") for fd in os.listdir(f"/proc/{guardian}/fd")
        }
        assert {target.split(":")[0] for target in held} <= {"pipe", os.devnull}
        assert len([target for target in held if target.startswith("pipe:")]) == 1  # ours
    finally:
        owner.communicate("go\n")
        os.kill(daemon, signal.SIGKILL)


def test_an_owner_killed_outright_has_its_marked_processes_stopped(
    outlived: Callable[[int], None],
) -> None:
    owner, daemon, guardian = start_owner("killed")
    owner.communicate("go\n")
    assert owner.returncode == -signal.SIGKILL
    outlived(daemon)  # the marked daemon is stopped within the guardian's grace
    outlived(guardian)  # and the guardian goes after its work


def test_a_clean_exit_dismisses_the_guardian_and_leaves_a_daemon_alone(
    pid_alive: Callable[[int], bool],
) -> None:
    """A daemon a hook started outside its group on purpose survives a clean exit."""
    owner, daemon, guardian = start_owner("clean")
    owner.communicate("go\n")
    try:
        assert owner.returncode == 0
        assert not pid_alive(guardian), "a clean exit reaps its guardian"
        time.sleep(0.2)
        assert pid_alive(daemon)
    finally:
        os.kill(daemon, signal.SIGKILL)


FORKER = """
import os, sys
from pathlib import Path
from hookgate.hooks import HookEngine, parse_hooks
from hookgate.hooks.files.yamlfile import Where
hook = {"command": 'echo "$HOOKGATE_GUARD" >> ' + sys.argv[1]}
config = parse_hooks({"preToolCall": [hook]}, Where("test.yaml"), base_dir=Path.cwd())
engine = HookEngine(config, session_id="s")
call = {"tool": "shell", "arguments": {}}
engine.run_sync("preToolCall", call)  # the hook's environment marked with our token
child = os.fork()
if child == 0:
    engine.run_sync("preToolCall", call)  # the same engine, in the child
    os._exit(0)
os.waitpid(child, 0)
print(os.getpid(), child)
"""


def test_a_forked_owners_hooks_carry_its_own_token(tmp_path: Path) -> None:
    """The engine marks a hook's environment once and keeps it; in a forked child, whose
    guardian is its own, the same engine marks the hook anew with the child's token."""
    tokens = tmp_path / "tokens"
    done = subprocess.run(
        [sys.executable, "-c", FORKER, str(tokens)], capture_output=True, text=True,
        check=True, timeout=30,
    )  # fmt: skip
    parent, child = done.stdout.split()
    first, second = tokens.read_text().splitlines()
    assert first.startswith(f"{parent}-")
    assert second.startswith(f"{child}-")


ADOPTER = """
import ctypes, sys
from hookgate.hooks.process import adopt_orphans_at_first_start, run_process_sync
def subreaper():
    flag = ctypes.c_int(-1)
    ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
    return flag.value
adopt_orphans_at_first_start()
before = subreaper()
run_process_sync(["true"], env={}, timeout=5)
print(before, subreaper())
"""


def test_orphans_are_adopted_when_the_first_child_starts() -> None:
    """`adopt_orphans_at_first_start` (what the `hookgate` command calls) makes the
    process the subreaper of its descendants' orphans once its first child starts,
    and not before: a command that starts none pays nothing for it."""
    done = subprocess.run(
        [sys.executable, "-c", ADOPTER], capture_output=True, text=True, check=True, timeout=30
    )
    assert done.stdout.split() == ["0", "1"]


FORKED_ADOPTER = ADOPTER.replace(
    "before = subreaper()\nrun_process_sync",
    'run_process_sync(["true"], env={}, timeout=5)\nimport os\n'
    "if os.fork():\n    os.wait()\n    sys.exit()\n"  # the child goes on, not a subreaper
    "before = subreaper()\nrun_process_sync",
)


def test_a_forked_child_adopts_its_own_orphans_at_its_first_start() -> None:
    """The subreaper setting is not inherited by fork(2), though everything Python
    knows of it is: a forked child that starts a process becomes the reaper of its own
    descendants' orphans then, as its parent did."""
    assert "os.fork()" in FORKED_ADOPTER
    done = subprocess.run(
        [sys.executable, "-c", FORKED_ADOPTER], capture_output=True, text=True, check=True,
        timeout=30,
    )  # fmt: skip
    assert done.stdout.split() == ["0", "1"]


DISMISSER = """
import os, subprocess, sys, time
from hookgate.hooks.process import guard
slow = subprocess.Popen(["sleep", "5"])  # a guardian that takes its time to leave
told, tell = os.pipe()
guard._guarded_pid = os.getpid()  # the owner of that guardian
print("waiting", flush=True)
guard._dismiss(slow.pid, tell)
print("dismissed", flush=True)
slow.kill()
"""


def test_a_ctrl_c_while_the_guardian_is_dismissed_prints_no_traceback() -> None:
    """At a clean exit the owner waits up to a second for its guardian to leave; a
    Ctrl-C then (a signal test hit it) cuts the wait short without a traceback."""
    owner = subprocess.Popen(
        [sys.executable, "-c", DISMISSER], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert owner.stdout is not None
    assert owner.stdout.readline() == "waiting\n"
    time.sleep(0.2)  # in the wait now
    owner.send_signal(signal.SIGINT)
    stdout, stderr = owner.communicate(timeout=10)
    assert "Traceback" not in stderr, stderr
    assert stdout == "dismissed\n"
