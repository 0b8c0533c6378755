"""Process handling: every way a hook can misbehave, with real processes.

Each failure mode runs end to end through `HookEngine` where it can: the hook writes
`$$` (its pid, which is its process group id: it leads a session of its own) to a
file, and once the engine has answered, nothing of that group may be left.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import gc
import os
import select
import signal
import stat
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from selectors import PollSelector
from typing import Any

import pytest

from hookgate.hooks import (
    EVENTS,
    FORMATS,
    HookEngine,
    Outcome,
    ProcessResult,
    SpawnError,
    run_process,
    run_process_sync,
)
from hookgate.hooks import runner as runner_module
from hookgate.hooks.kinds.persistent import resident as resident_module
from hookgate.hooks.kinds.persistent.resident import Resident
from hookgate.hooks.process import (
    DEFAULT_PIPE_SIZE,
    HOLD_WAIT,
    KILL_GRACE,
    OUTPUT_CAP,
    PIPE_SIZE,
    programs_path,
    subreaper,
)
from hookgate.hooks.process import core as process_core
from hookgate.hooks.process.guard import guard_token
from hooks.conftest import recorded_holds

#: The timeout of the hooks below that are meant to run past it.
TIMEOUT = 0.3
#: How long the sleeping hooks below sleep: a bound that asserts an order (stopped
#: before its own end), never the machine's speed.
SLEEPER_S = 30
#: A payload far larger than a pipe's buffer (64 KiB on Linux).
BIG = 10 * 1024 * 1024
#: What the flooding hooks write: 100 MB.
FLOOD = 100_000_000

MakeEngine = Callable[..., HookEngine]
RunHooks = Callable[..., Outcome]


Run = Callable[..., ProcessResult]


def _on_a_loop(argv: list[str], **options: Any) -> ProcessResult:
    return asyncio.run(run_process(argv, **options))


def _held_on_a_loop(argv: list[str], **options: Any) -> ProcessResult:
    """As the engine runs a quick hook: its exit waited for with the loop held first."""
    return asyncio.run(run_process(argv, hold=HOLD_WAIT, **options))


@pytest.fixture(params=["async", "held", "sync"])
def run(request: pytest.FixtureRequest) -> Run:
    """`run(argv, **options)`: `run_process` on a fresh loop (holding it for the exit
    first, or not), or `run_process_sync`."""
    driver: Run = {"async": _on_a_loop, "held": _held_on_a_loop, "sync": run_process_sync}[
        request.param
    ]

    def run_(argv: list[str], **options: Any) -> ProcessResult:
        options.setdefault("env", dict(os.environ))
        options.setdefault("timeout", 5.0)
        return driver(argv, **options)

    return run_


@pytest.fixture
def sh(run: Run) -> Run:
    """`sh(script, **options)`: `run` of `/bin/sh -c script`."""
    return lambda script, **options: run(["/bin/sh", "-c", script], **options)


# --- run_process on its own -------------------------------------------------------------


def test_exit_status_and_both_streams_come_back(sh: Run) -> None:
    result = sh("echo out; echo err >&2; exit 3")
    assert (result.returncode, result.stdout, result.stderr) == (3, b"out\n", b"err\n")
    assert not (result.timed_out)
    assert not (result.stdout_truncated)
    assert not (result.stderr_truncated)
    assert result.signal is None


def test_stdin_is_written_while_output_is_drained(run: Run) -> None:
    """`cat` echoes 10 MB back: writing it all before reading would deadlock both sides."""
    result = run(["cat"], stdin=b"x" * BIG)
    assert not result.timed_out  # the deadlock this avoids would end at the timeout
    assert result.returncode == 0
    assert result.stdout == b"x" * OUTPUT_CAP
    assert result.stdout_truncated


@pytest.mark.parametrize(
    "size", [0, 1, select.PIPE_BUF, select.PIPE_BUF + 1, DEFAULT_PIPE_SIZE, DEFAULT_PIPE_SIZE + 1]
)
def test_input_of_any_size_arrives_whole(size: int, run: Run) -> None:
    """Up to `PIPE_BUF` bytes go to the fresh pipe in one blocking write (it cannot
    block); more, through a non-blocking one that the rest follows."""
    data = bytes(index % 251 for index in range(size))
    result = run(["cat"], stdin=data)
    assert (result.returncode, result.stdout) == (0, data)


#: Prints the capacity of its stdout pipe (fcntl F_GETPIPE_SZ).
PRINTS_ITS_PIPE_SIZE = [sys.executable, "-c", "import fcntl; print(fcntl.fcntl(1, 1032))"]
_F_GETPIPE_SZ, _F_SETPIPE_SZ = 1032, 1031
#: The capacities a pipe is made with: the default, or two pages once the user's pipe
#: budget (`/proc/sys/fs/pipe-user-pages-soft`, shared by every process of the user,
#: other test runs included) is spent. A resize the kernel refuses leaves the pipe so
#: (`enlarge_pipe`): the documented fallback.
MADE_SIZES = {DEFAULT_PIPE_SIZE, 2 * os.sysconf("SC_PAGE_SIZE")}


def _refuses_now(size: int) -> bool:
    """Whether the kernel refuses a pipe of `size` bytes to this user at the moment."""
    read_end, write_end = os.pipe()
    try:
        fcntl.fcntl(write_end, _F_SETPIPE_SZ, size)
    except OSError:
        return True
    finally:
        os.close(read_end)
        os.close(write_end)
    return False


@pytest.mark.parametrize(
    ("asked", "capacity"), [(PIPE_SIZE, PIPE_SIZE), (None, DEFAULT_PIPE_SIZE), (256 * 1024,) * 2]
)
def test_the_stdout_pipe_holds_what_was_asked(asked: int | None, capacity: int, run: Run) -> None:
    """Output waits in the pipe until the exit is seen; `pipe_size` sets how much fits
    (`PIPE_SIZE` unless said otherwise; None keeps the system's default). Where the
    kernel refuses the size (the user's pipe budget is spent: a busy machine), the
    pipe keeps the size it was made with, and the process runs all the same."""
    for options in [{"pipe_size": asked}] + ([{}] if asked == PIPE_SIZE else []):
        got = int(run(PRINTS_ITS_PIPE_SIZE, **options).stdout)
        if got != capacity:
            assert got in MADE_SIZES, got
            assert asked is None or _refuses_now(asked), (asked, got)


def test_a_size_the_kernel_refuses_leaves_the_pipe_as_made(run: Run) -> None:
    """Asked for more than `/proc/sys/fs/pipe-max-size` (which only a process with
    CAP_SYS_RESOURCE may pass), the pipe keeps the size it was made with; the process
    runs, and its output arrives whole."""
    too_big = 2 * int(Path("/proc/sys/fs/pipe-max-size").read_text())
    if not _refuses_now(too_big):
        pytest.skip("this process may pass pipe-max-size (CAP_SYS_RESOURCE)")
    assert int(run(PRINTS_ITS_PIPE_SIZE, pipe_size=too_big).stdout) in MADE_SIZES
    result = run(["cat"], stdin=b"x" * BIG, pipe_size=too_big)
    assert (result.returncode, len(result.stdout)) == (0, OUTPUT_CAP)


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_flood_is_capped_and_flagged(stream: str, sh: Run) -> None:
    redirect = "" if stream == "stdout" else ">&2"
    result = sh(f"head -c {FLOOD} /dev/zero {redirect}", timeout=10)
    assert result.returncode == 0
    assert not result.timed_out
    assert len(getattr(result, stream)) == OUTPUT_CAP
    assert getattr(result, f"{stream}_truncated")


def test_output_exactly_at_the_cap_is_not_flagged(sh: Run) -> None:
    result = sh(f"head -c {OUTPUT_CAP} /dev/zero")
    assert len(result.stdout) == OUTPUT_CAP
    assert not result.stdout_truncated


def test_a_sleeper_is_stopped_at_its_timeout(
    tmp_path: Path, read_pid: Callable[[Path], int], group_gone: Callable[[int], None], sh: Run
) -> None:
    started = time.monotonic()
    result = sh(f"echo $$ > {tmp_path}/pid; sleep 30", timeout=TIMEOUT)
    elapsed = time.monotonic() - started
    assert result.timed_out
    assert result.signal == signal.SIGTERM
    assert TIMEOUT <= elapsed < SLEEPER_S  # stopped at its timeout, not at its own end
    group_gone(read_pid(tmp_path / "pid"))


def test_a_process_ignoring_sigterm_is_killed_after_the_grace(
    tmp_path: Path, read_pid: Callable[[Path], int], group_gone: Callable[[int], None], sh: Run
) -> None:
    started = time.monotonic()
    result = sh(f"trap '' TERM; echo $$ > {tmp_path}/pid; sleep 30", timeout=TIMEOUT)
    elapsed = time.monotonic() - started
    assert result.timed_out
    assert result.signal == signal.SIGKILL
    assert TIMEOUT + KILL_GRACE <= elapsed < SLEEPER_S
    group_gone(read_pid(tmp_path / "pid"))


def test_a_grandchild_holding_stdout_does_not_hold_us(
    tmp_path: Path,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    pid_alive: Callable[[int], bool],
    sh: Run,
) -> None:
    result = sh(
        f"echo $$ > {tmp_path}/pid; (sleep 30; echo late) & echo $! > {tmp_path}/kid; echo early"
    )
    assert (result.returncode, result.stdout, result.timed_out) == (0, b"early\n", False)
    assert not pid_alive(read_pid(tmp_path / "kid"))
    group_gone(read_pid(tmp_path / "pid"))


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGSEGV, signal.SIGTERM])
def test_a_process_killed_by_a_signal_reports_it(signum: int, sh: Run) -> None:
    result = sh(f"kill -{signal.Signals(signum).name[3:]} $$")
    assert result.returncode == -signum
    assert result.signal == signum
    assert not result.timed_out


def test_cancelling_the_caller_stops_the_group(
    tmp_path: Path, read_pid: Callable[[Path], int], group_gone: Callable[[int], None]
) -> None:
    async def cancel_soon() -> float:
        task = asyncio.create_task(
            run_process(
                ["/bin/sh", "-c", f"echo $$ > {tmp_path}/pid; exec sleep 30"],
                env=dict(os.environ),
                timeout=30,
            )
        )
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(cancel_soon()) < SLEEPER_S  # not its own end
    group_gone(read_pid(tmp_path / "pid"))


def _open_fds() -> set[str]:
    """Our open fds, once the guardian (started at the first spawn, kept for the life of
    the process, its pipe open) is up: a test that spawns first must not count its pipe."""
    # Garbage of earlier tests (an unclosed loop in a reference cycle) could otherwise
    # close its fds between the two looks, and pass for a change made here.
    gc.collect()
    guard_token()
    return set(os.listdir("/proc/self/fd"))


def assert_no_fd_left(before: set[str], after: set[str]) -> None:
    """No fd opened since `before` is still open. Fewer may be: another thread of the
    suite (an earlier test's pooled http connection timing out) may close its own."""
    assert after - before == set(), {
        fd: os.readlink(f"/proc/self/fd/{fd}") for fd in after - before
    }


#: How a process can end, for the fd checks: each path closes its fds its own way.
ENDINGS = [
    "true",  # exits at once: read after its exit
    "sleep 0.05; echo late; echo err >&2",  # outlives the quiet start: drained as it runs
    "sleep 30",  # timed out
    "(sleep 30; echo late) & echo early",  # a grandchild holds stdout past the exit
]


@pytest.mark.parametrize("script", ENDINGS)
def test_every_fd_is_released_by_the_next_loop_iteration(script: str) -> None:
    """The pidfd and the read ends are closed one loop iteration after the result."""

    async def scenario() -> tuple[set[str], set[str]]:
        before = _open_fds()
        await run_process(["/bin/sh", "-c", script], env=dict(os.environ), timeout=TIMEOUT)
        await asyncio.sleep(0)
        return before, _open_fds()

    before, after = asyncio.run(scenario())
    assert_no_fd_left(before, after)


def test_no_fd_is_left_after_a_cancellation_or_a_spawn_error(tmp_path: Path) -> None:
    async def scenario() -> tuple[set[str], set[str]]:
        before = _open_fds()
        task = asyncio.create_task(
            run_process(["/bin/sh", "-c", "sleep 30"], env=dict(os.environ), timeout=30)
        )
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(SpawnError):
            await run_process(["/bin/true"], env={}, cwd=str(tmp_path / "gone"), timeout=1)
        await asyncio.sleep(0)
        return before, _open_fds()

    before, after = asyncio.run(scenario())
    assert_no_fd_left(before, after)


@pytest.mark.parametrize("script", ENDINGS)
def test_run_process_sync_closes_every_fd_before_it_returns(script: str) -> None:
    before = _open_fds()
    run_process_sync(["/bin/sh", "-c", script], env=dict(os.environ), timeout=TIMEOUT)
    assert_no_fd_left(before, _open_fds())


class Interrupted(Exception):
    """Raised by a signal handler in the middle of a blocking wait, like KeyboardInterrupt."""


def test_an_interrupted_run_process_sync_stops_the_group_and_goes_on(
    tmp_path: Path, read_pid: Callable[[Path], int], group_gone: Callable[[int], None]
) -> None:
    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    before = _open_fds()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        started = time.monotonic()
        with pytest.raises(Interrupted):
            run_process_sync(
                ["/bin/sh", "-c", f"echo $$ > {tmp_path}/pid; exec sleep 30"],
                env=dict(os.environ),
                timeout=30,
            )
        assert time.monotonic() - started < SLEEPER_S  # not its own end
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    group_gone(read_pid(tmp_path / "pid"))
    assert_no_fd_left(before, _open_fds())


@pytest.mark.parametrize("script", ["echo out; echo err >&2; exit 3", "sleep 30"])
def test_without_a_pidfd_both_drivers_still_see_the_exit_and_the_timeout(
    monkeypatch: pytest.MonkeyPatch, run: Run, script: str
) -> None:
    """Linux before 5.3 has no pidfd: a thread (async) or a short tick (sync) waits."""
    monkeypatch.setattr("hookgate.hooks.process.core._open_pidfd", lambda pid: None)
    started = time.monotonic()
    result = run(["/bin/sh", "-c", script], timeout=TIMEOUT)
    if script == "sleep 30":
        assert result.timed_out
        assert TIMEOUT <= time.monotonic() - started < SLEEPER_S
    else:
        assert (result.returncode, result.stdout, result.stderr) == (3, b"out\n", b"err\n")
        assert not result.timed_out


def test_input_given_as_a_function_is_built_once_the_process_has_started(run: Run) -> None:
    """Building the input then overlaps the process's start-up instead of preceding it."""
    children_when_called: list[str] = []

    def build() -> bytes:
        tasks = Path("/proc/self/task")
        children_when_called.append(
            " ".join((task / "children").read_text() for task in tasks.iterdir()).strip()
        )
        return b"built"

    result = run(["cat"], stdin=build)
    assert result.stdout == b"built"
    assert len(children_when_called) == 1
    assert children_when_called[0]  # the process already existed


def test_the_environment_is_exactly_the_one_given(sh: Run) -> None:
    result = sh('echo "$ONLY-${HOME-unset}"', env={"ONLY": "this", "PATH": os.defpath})
    assert result.stdout == b"this-unset\n"


@pytest.mark.parametrize("where", ["same", "other"])
def test_the_process_leads_its_own_group_whichever_way_it_starts(
    tmp_path: Path, where: str, sh: Run
) -> None:
    """`cwd` other than ours starts through Popen, ours through posix_spawn: both setsid."""
    cwd = os.getcwd() if where == "same" else str(tmp_path)
    result = sh("echo $$; cut -d' ' -f5,6 /proc/$$/stat; pwd", cwd=cwd)
    pid, groups, pwd = result.stdout.decode().split("\n")[:3]
    assert groups == f"{pid} {pid}"  # process group and session are its own
    assert pwd == cwd
    assert os.getpgid(0) != int(pid)


def test_a_missing_program_is_a_spawn_error(run: Run) -> None:
    with pytest.raises(SpawnError, match="not found") as caught:
        run(["definitely-not-a-hookgate-program"])
    assert caught.value.errno == 2


def test_a_file_that_is_not_executable_is_a_spawn_error(tmp_path: Path, run: Run) -> None:
    script = tmp_path / "hook.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    with pytest.raises(SpawnError, match="Permission denied"):
        run([str(script)])


def test_a_missing_directory_is_a_spawn_error(tmp_path: Path, run: Run) -> None:
    with pytest.raises(SpawnError, match="No such file"):
        run(["/bin/true"], cwd=str(tmp_path / "gone"))


def test_the_program_is_searched_in_the_childs_path(tmp_path: Path, run: Run) -> None:
    program = tmp_path / "only-here"
    program.write_text("#!/bin/sh\necho found\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    result = run(["only-here"], env={"PATH": f"{tmp_path}:{os.defpath}"})
    assert result.stdout == b"found\n"


# --- a pipe that never runs dry --------------------------------------------------------
# A writer as fast as its reader keeps a pipe from ever being empty (`cat /dev/zero`
# on a loaded machine). /dev/zero itself stands in for such a pipe below: every read of
# it succeeds. A reader that reads until the pipe is empty would never return, and the
# loop waiting on it (the event loop, or the poll loop) would never see the deadline.


class Stuck(KeyboardInterrupt):
    """Raised by the alarm in a block that did not return. An event loop logs what its
    callbacks raise and goes on, all but SystemExit and KeyboardInterrupt: hence the base."""


@contextlib.contextmanager
def never_stuck(seconds: float = 5.0) -> Iterator[None]:
    """Fail, rather than hang, when the block has not returned within `seconds`."""

    def stuck(signum: int, frame: object) -> None:
        raise Stuck

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except Stuck:
        pytest.fail(f"still reading after {seconds}s: the waiting loop never got control back")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def dev_zero() -> Iterator[int]:
    fd = os.open("/dev/zero", os.O_RDONLY)
    yield fd
    os.close(fd)


def test_an_output_that_never_runs_dry_is_read_a_bounded_amount_at_a_time(dev_zero: int) -> None:
    """What both drivers rely on to keep the timeout against a flood."""
    output = process_core.Output(dev_zero, cap=1000)
    with never_stuck():
        output.read_available()
    assert output.reading  # not at end of file: the loop calls again while it is ready
    assert (len(output.data), output.truncated) == (1000, True)


@pytest.mark.parametrize("driver", ["async", "sync"])
def test_a_resident_process_flooding_stderr_still_times_out(driver: str, dev_zero: int) -> None:
    """A persistent hook's stderr is drained as it runs: a flood of it must not hold
    the wait for the reply past the deadline, on an event loop or in poll(2)."""
    resident = Resident.start(["sleep", "30"], env=dict(os.environ), cwd=None)
    os.dup2(dev_zero, resident.process.stderr.fd)  # its stderr never runs dry from now on
    # epoll refuses /dev/zero; poll(2) takes it, as it takes a pipe.
    runner = asyncio.Runner(loop_factory=lambda: asyncio.SelectorEventLoop(PollSelector()))

    def ask() -> bytes:
        deadline = started + TIMEOUT
        if driver == "sync":
            return resident.ask_sync(b"{}\n", deadline)
        return runner.run(resident.ask(b"{}\n", deadline))

    started = time.monotonic()
    try:
        with never_stuck(), pytest.raises(TimeoutError):
            ask()
        with never_stuck():
            runner.run(resident.stop()) if driver == "async" else resident.stop_sync()
    finally:
        resident.kill()
        runner.close()
    assert resident.process.reaped


async def loop_ran_during(work: Callable[[], Awaitable[object]]) -> bool:
    """Whether the event loop ran while `work()` was awaited: a callback scheduled
    before it has run by the time it returns (else it runs right after)."""
    ran: list[bool] = []
    asyncio.get_running_loop().call_soon(ran.append, True)
    await work()
    looped = bool(ran)
    await asyncio.sleep(0)
    return looped


#: What `QUICK` and `HOLD_WAIT` become where a test needs every run to count as quick:
#: on a busy machine, a run of microseconds may take milliseconds, and what these tests
#: assert is what follows from a run being quick (or not), not the machine's speed.
EVERY_RUN_QUICK = 60.0


@pytest.fixture
def every_run_quick(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], None]:
    """`every_run_quick(True)`: every run of a hook or a resident counts as quick, and a
    held wait lasts until the answer; `every_run_quick(False)` puts the real bounds back."""
    real = {name: getattr(process_core, name) for name in ("QUICK", "HOLD_WAIT")}

    def set_(on: bool) -> None:
        for module in (resident_module, runner_module):
            for name, value in real.items():
                monkeypatch.setattr(module, name, EVERY_RUN_QUICK if on else value)

    set_(True)
    return set_


#: A resident child that answers each line after `argv[1]` seconds.
ECHO_AFTER = (
    "import sys, time\n"
    "for line in sys.stdin:\n"
    "    time.sleep(float(sys.argv[1]))\n"
    "    sys.stdout.write(line)\n"
    "    sys.stdout.flush()\n"
)


def _resident(script: str, *args: str) -> Resident:
    """A resident Python child running `script` (with `args`)."""
    return Resident.start([sys.executable, "-c", script, *args], env=dict(os.environ), cwd=None)


def _resident_echo(after: float) -> Resident:
    return _resident(ECHO_AFTER, str(after))


def test_a_quick_resident_answer_is_read_without_a_pass_of_the_loop(
    every_run_quick: Callable[[bool], None],
) -> None:
    """A persistent hook that answers within `QUICK` is waited for with the loop held:
    a pass of the loop would cost as much as the exchange. Whether the loop ran
    meanwhile shows in a callback scheduled before the event was written."""
    resident = _resident_echo(0)

    async def ask(number: int) -> None:
        assert await resident.ask(b"%d\n" % number, time.monotonic() + 10) == b"%d" % number

    async def asks() -> list[bool]:
        looped = [await loop_ran_during(functools.partial(ask, number)) for number in range(30)]
        await resident.stop()
        return looped

    looped = asyncio.run(asks())
    # The first ask waits on the loop (not known to be quick yet); every later one holds it.
    assert looped == [True] + [False] * 29, looped


#: A resident child that answers each line at once, or after 0.05 s once the file named
#: by `argv[1]` exists.
ECHO_SLOW_ONCE_TOLD = (
    "import os, sys, time\n"
    "for line in sys.stdin:\n"
    "    if os.path.exists(sys.argv[1]):\n"
    "        time.sleep(0.05)\n"
    "    sys.stdout.write(line)\n"
    "    sys.stdout.flush()\n"
)


def test_a_slow_resident_answer_does_not_hold_the_loop(
    tmp_path: Path, every_run_quick: Callable[[bool], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook slower than `QUICK` holds the loop twice, for `HOLD_WAIT` at most (once
    could be a busy machine's doing): then it is waited for on the loop, which runs
    other work meanwhile. Counted: the asks that wait with the loop held (`_one_read`),
    once quick, then once slow (50 ms is past `QUICK` on any machine)."""
    slow = tmp_path / "slow"
    resident = _resident(ECHO_SLOW_ONCE_TOLD, str(slow))
    held = count_calls(monkeypatch, Resident, "_one_read")

    async def asks(numbers: range) -> list[bool]:
        looped = []
        for number in numbers:
            ask = functools.partial(resident.ask, b"%d\n" % number, time.monotonic() + 10)
            looped.append(await loop_ran_during(ask))
        return looped

    async def quick_then_slow() -> tuple[int, list[bool]]:
        await asks(range(5))
        quick_holds = held[0]
        every_run_quick(False)
        slow.touch()
        held[0] = 0
        looped = await asks(range(5, 10))
        await resident.stop()
        return quick_holds, looped

    quick_holds, looped = asyncio.run(quick_then_slow())
    assert quick_holds == 4  # each ask after the first
    assert held[0] == 2  # the first two slow ones, then no more
    assert looped == [True] * 5  # none of which was answered with the loop held


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """A counter of the calls of method `name` of class `owner` from now on."""
    calls, real = [0], getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


#: A resident child whose answer to each line is out before the line is: `n + 1` to
#: line `n`, and `0` at once, for the first; each in one write (`print` makes two).
AHEAD = (
    "import os, sys\n"
    "os.write(1, b'0\\n')\n"
    "for line in sys.stdin:\n"
    "    os.write(1, b'%d\\n' % (int(line) + 1))\n"
)


class CountedPoll:
    """A resident's poll object, counting the calls that wait on it."""

    def __init__(self, poll: Any) -> None:
        self.poll_object, self.calls = poll, 0

    def poll(self, timeout: int) -> list[tuple[int, int]]:
        self.calls += 1
        return self.poll_object.poll(timeout)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.poll_object, name)


def _answered(resident: Resident) -> None:
    """Wait until the resident's next answer is out: in its stdout, or read already
    (by the event loop, which watches stdout while it waits for an answer)."""
    if b"\n" not in resident._buffer:
        assert select.select([resident.process.stdout.fd], [], [], 10)[0]


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_an_answer_already_there_is_read_without_a_poll(
    driver: str, every_run_quick: Callable[[bool], None]
) -> None:
    """A process on our processor usually runs as soon as its line is written, and its
    answer is there by the time we look: it is read at once, without a poll(2) (about
    a tenth of such an exchange), and on the event loop without a pass of the loop.
    Here each answer is out before its line is written."""
    resident = _resident(AHEAD)
    counted = resident._poll = CountedPoll(resident._poll)  # type: ignore[assignment]

    def ask_sync(number: int) -> None:
        _answered(resident)
        assert resident.ask_sync(b"%d\n" % number, time.monotonic() + 10) == b"%d" % number

    async def ask(number: int) -> None:
        _answered(resident)
        assert await resident.ask(b"%d\n" % number, time.monotonic() + 10) == b"%d" % number

    async def asks() -> list[bool]:
        """Whether each ask held the loop: a callback scheduled before it has not run
        (the loop does not run between the asks either, to leave the answers unread)."""
        held = []
        for number in range(30):
            ran: list[bool] = []
            asyncio.get_running_loop().call_soon(ran.append, True)
            await ask(number)
            held.append(not ran)
        return held

    try:
        if driver == "async":
            held = asyncio.run(asks())
            # The first waits on the loop (not known to be quick yet); then each holds it.
            assert held == [False] + [True] * 29, held
        else:
            for number in range(30):
                ask_sync(number)
        polls = counted.calls
    finally:
        resident.kill()
    assert polls == 0


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_an_answer_not_there_at_once_is_looked_for_again_before_any_poll(
    driver: str, monkeypatch: pytest.MonkeyPatch, every_run_quick: Callable[[bool], None]
) -> None:
    """An answer the first look misses is looked for again for `LOOK_AGAIN`, our
    processor offered before each look (to the process, if it waits for it), with no
    poll. Here the first two looks of each event find nothing whether or not the answer
    is there; `LOOK_AGAIN` is made long, so that a pause of ours cannot end the
    looking."""
    resident = _resident_echo(0)
    counted = resident._poll = CountedPoll(resident._poll)  # type: ignore[assignment]
    stdout, misses, yields = resident.process.stdout.fd, [0], [0]
    real_read, real_yield = os.read, os.sched_yield

    def read(fd: int, size: int) -> bytes:
        if fd == stdout and misses[0]:
            misses[0] -= 1
            raise BlockingIOError
        return real_read(fd, size)

    def sched_yield() -> None:
        yields[0] += 1
        real_yield()

    def ask_sync(number: int) -> None:
        assert resident.ask_sync(b"%d\n" % number, time.monotonic() + 10) == b"%d" % number

    async def asks() -> None:
        # The first events: the interpreter starts, the loop waits until one is quick.
        for number in range(5):
            assert await resident.ask(b"%d\n" % number, time.monotonic() + 10) == b"%d" % number
        counted.calls = yields[0] = 0
        for number in range(5, 35):
            misses[0] = 2
            assert await resident.ask(b"%d\n" % number, time.monotonic() + 10) == b"%d" % number

    monkeypatch.setattr(resident_module, "LOOK_AGAIN", 10.0)
    monkeypatch.setattr(os, "sched_yield", sched_yield)
    try:
        if driver == "sync":
            ask_sync(0)
            monkeypatch.setattr(os, "read", read)
            for number in range(1, 31):
                misses[0] = 2
                ask_sync(number)
        else:
            monkeypatch.setattr(os, "read", read)
            asyncio.run(asks())
    finally:
        monkeypatch.undo()
        resident.kill()
    assert counted.calls == 0
    # Two looks again at each event, at least (the second finds the answer if it is
    # out); on the event loop, at each event (each counts as quick here).
    assert yields[0] >= 60, yields[0]


def test_an_answer_never_there_at_once_is_looked_for_less_and_less(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the answer takes longer than `LOOK_AGAIN`, looking for it before the poll
    finds nothing, and costs that much processor time: each miss in a row doubles the
    events that go straight to the poll, up to 63, and it is tried again after them (a
    process can move to our processor, or answer sooner). Here every early look misses,
    whatever the machine's speed; a look that finds the answer starts the series again."""
    resident = _resident_echo(0)
    looked: list[int] = []
    number = 0
    found_at = {6}  # the early look at this event finds the answer
    real_read_soon = resident_module._read_soon

    def read_soon(fd: int, seconds: float) -> bytes | None:
        looked.append(number)
        if number in found_at:
            assert select.select([fd], [], [], 10)[0]
            return real_read_soon(fd, seconds)
        return None

    monkeypatch.setattr(resident_module, "_read_soon", read_soon)
    try:
        for number in range(200):  # `read_soon` reads it
            assert resident.ask_sync(b"%d\n" % number, time.monotonic() + 10) == b"%d" % number
    finally:
        monkeypatch.undo()
        resident.stop_sync()
    # Missed at 0 and 2 (1, then 3 skipped after); found at 6, so the series starts
    # again at 7: 1, 3, 7, 15, 31, 63 skipped between misses, and 63 at most.
    assert looked == [0, 2, 6, 7, 9, 13, 21, 37, 69, 133, 197], looked


#: A resident child whose answer to a line `n` is `n` bytes, in one write.
ANSWERS_AT_LENGTH = (
    "import os, sys\nfor line in sys.stdin:\n    os.write(1, b'x' * int(line) + b'\\n')\n"
)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_an_answer_longer_than_a_pipe_holds_comes_whole(driver: str) -> None:
    """A resident process's stdout keeps the default 64 KiB pipe: an answer of up to
    `LINE_CAP` bytes comes through it a pipe's worth at a time, read as it is written."""
    resident = _resident(ANSWERS_AT_LENGTH)
    lengths = [10, DEFAULT_PIPE_SIZE - 1, DEFAULT_PIPE_SIZE, 600_000, OUTPUT_CAP, 10]

    async def asks() -> list[int]:
        return [len(await resident.ask(b"%d\n" % n, time.monotonic() + 10)) for n in lengths]

    try:
        if driver == "sync":
            got = [len(resident.ask_sync(b"%d\n" % n, time.monotonic() + 10)) for n in lengths]
        else:
            got = asyncio.run(asks())
    finally:
        resident.kill()
    assert got == lengths


#: A resident child whose answer to each line is the line's length, with its end.
LENGTH_OF_LINE = (
    "import sys\n"
    "for line in sys.stdin.buffer:\n"
    "    sys.stdout.write('%d\\n' % len(line))\n"
    "    sys.stdout.flush()\n"
)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_line_longer_than_a_pipe_holds_goes_whole(driver: str) -> None:
    """An event line is written in one write where the pipe takes it whole, and the rest
    of a longer one as the process reads: every byte once, in order."""
    resident = _resident(LENGTH_OF_LINE)
    lengths = [10, DEFAULT_PIPE_SIZE - 1, DEFAULT_PIPE_SIZE, DEFAULT_PIPE_SIZE + 1, 600_000, 10]
    lines = [b"x" * (length - 1) + b"\n" for length in lengths]

    async def asks() -> list[bytes]:
        return [await resident.ask(line, time.monotonic() + 10) for line in lines]

    try:
        if driver == "sync":
            got = [resident.ask_sync(line, time.monotonic() + 10) for line in lines]
        else:
            got = asyncio.run(asks())
    finally:
        resident.kill()
    assert got == [b"%d" % length for length in lengths]


#: A resident child that logs 1 KiB to stderr with each answer, which is its line.
LOGS_AND_ECHOES = (
    "import sys\n"
    "for line in sys.stdin:\n"
    "    sys.stderr.write('x' * 1023 + '\\n')\n"
    "    sys.stderr.flush()\n"
    "    sys.stdout.write(line)\n"
    "    sys.stdout.flush()\n"
)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_resident_logging_at_every_answer_is_answered_every_time(driver: str) -> None:
    """An answer read at once leaves stderr unread; when the log fills its pipe, the
    process stops before its answer, and the wait for it drains the log: 300 answers,
    300 KiB of log through a 64 KiB pipe, none late."""
    resident = _resident(LOGS_AND_ECHOES)

    async def asks() -> None:
        for number in range(300):
            assert await resident.ask(b"%d\n" % number, time.monotonic() + 5) == b"%d" % number
        await resident.stop()

    try:
        if driver == "async":
            asyncio.run(asks())
        else:
            for number in range(300):
                assert resident.ask_sync(b"%d\n" % number, time.monotonic() + 5) == b"%d" % number
            resident.stop_sync()
    finally:
        resident.kill()


# --- each failure mode through the engine -----------------------------------------------


def guard(command: str, **options: Any) -> dict[str, Any]:
    return {"preToolCall": [{"name": "guard", "command": command, **options}]}


SHELL_CALL = {"tool": "shell", "arguments": {"command": "ls"}}


def test_a_quick_hook_is_awaited_without_a_pass_of_the_loop(
    make_engine: MakeEngine, every_run_quick: Callable[[bool], None]
) -> None:
    """Once a process hook has run within `QUICK`, `await engine.run` waits for its next
    run with the loop held: the loop's own wake-up would cost a twentieth of the run.
    Whether the loop ran meanwhile shows in a callback scheduled before each event."""
    # `true` itself, no shell first: well under `QUICK` on a slower machine too.
    engine = make_engine({"preToolCall": [{"name": "guard", "args": ["/bin/true"]}]})

    async def event() -> None:
        assert (await engine.run("preToolCall", SHELL_CALL)).allowed

    async def events() -> list[bool]:
        return [await loop_ran_during(event) for _ in range(20)]

    looped = asyncio.run(events())
    assert looped == [True] + [False] * 19, looped  # the first: not known to be quick yet


def test_a_quick_hook_that_turns_slow_holds_the_loop_twice_and_briefly(
    tmp_path: Path, make_engine: MakeEngine, every_run_quick: Callable[[bool], None]
) -> None:
    """A hook that was quick and now takes 50 ms (past `QUICK` on any machine) holds
    the loop for `HOLD_WAIT` at most, twice (once could be a busy machine's doing):
    then it is waited for on the loop, which runs other work meanwhile. Its verdict is
    the same either way. Counted: the runs started with a hold, and the events the
    loop ran during."""
    slow = tmp_path / "slow"
    engine = make_engine(guard(f"if [ -e {slow} ]; then sleep 0.05; exit 2; fi"))
    holds = recorded_holds(engine)

    async def slow_event() -> None:
        assert (await engine.run("preToolCall", SHELL_CALL)).blocked

    async def events() -> list[bool]:
        for _ in range(5):  # quick: known to be so from the first on
            assert (await engine.run("preToolCall", SHELL_CALL)).allowed
        every_run_quick(False)
        slow.touch()
        return [await loop_ran_during(slow_event) for _ in range(4)]

    looped = asyncio.run(events())
    assert holds == [0.0] + [EVERY_RUN_QUICK] * 4 + [HOLD_WAIT] * 2 + [0.0] * 2, holds
    assert looped == [True] * 4  # the held wait ended before the hook did


#: A hook that logs its stdout pipe's capacity to the file named by its first argument,
#: then answers allow, padded to its second argument's length.
LOGS_ITS_PIPE_SIZE = (
    "import fcntl, sys\n"
    "with open(sys.argv[1], 'a') as log:\n"
    "    log.write('%d\\n' % fcntl.fcntl(1, 1032))\n"
    "sys.stdout.write(' ' * int(sys.argv[2]) + '{}')\n"
)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_hook_whose_reply_filled_a_pipe_gets_a_larger_one_from_then_on(
    driver: str, tmp_path: Path, make_engine: MakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply longer than a default pipe is half-written when the pipe fills, and
    waits for hookgate to drain it (`QUIET_START` after the start, when the hook is not
    done by then). From its next run on, such a hook's stdout pipe holds `PIPE_SIZE`,
    where its reply waits for the exit. A hook whose replies are short keeps the
    default pipe, and spares the resize: most hooks."""
    logs = {name: tmp_path / name for name in ("long", "short")}
    pads = {"long": 100_000, "short": 10}
    engine = make_engine({"preToolCall": [
        {"name": name, "args": [sys.executable, "-c", LOGS_ITS_PIPE_SIZE, str(log), str(pads[name])]}
        for name, log in logs.items()
    ]})  # fmt: skip

    granted = record_resizes(monkeypatch)

    async def events() -> list[Outcome]:
        return [await engine.run("preToolCall", SHELL_CALL) for _ in range(3)]

    if driver == "sync":
        outcomes = [engine.run_sync("preToolCall", SHELL_CALL) for _ in range(3)]
    else:
        outcomes = asyncio.run(events())
    assert all(outcome.allowed and not outcome.errors for outcome in outcomes)
    seen = {name: [int(size) for size in log.read_text().split()] for name, log in logs.items()}
    # Asked for twice, both for the long one; what the kernel granted (`PIPE_SIZE`, or
    # the pipe as made where the user's pipe budget is spent) is what the hook saw.
    assert [asked for asked, _ in granted] == [PIPE_SIZE, PIPE_SIZE]
    assert seen["long"][1:] == [capacity for _, capacity in granted]
    assert all(capacity in {PIPE_SIZE, *MADE_SIZES} for _, capacity in granted), granted
    assert {*seen["long"][:1], *seen["short"]} <= MADE_SIZES, seen


def record_resizes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Each stdout pipe resize from now on, as (size asked, capacity the kernel left)."""
    granted: list[tuple[int, int]] = []
    real_enlarge = process_core.enlarge_pipe

    def enlarge(fd: int, size: int) -> None:
        real_enlarge(fd, size)
        granted.append((size, fcntl.fcntl(fd, _F_GETPIPE_SZ)))

    monkeypatch.setattr(process_core, "enlarge_pipe", enlarge)
    return granted


@pytest.mark.parametrize(
    ("on_error", "blocked"), [("warn", False), ("fail", True), ("ignore", False)]
)
def test_sleeper_times_out_and_on_error_decides(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    on_error: str,
    blocked: bool,
) -> None:
    engine = make_engine(
        guard(f"echo $$ > {tmp_path}/pid; sleep 30", timeout=TIMEOUT, onError=on_error)
    )
    started = time.monotonic()
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert time.monotonic() - started < SLEEPER_S  # not its own end
    assert outcome.blocked is blocked
    if on_error == "fail":
        assert outcome.reason == "hook 'guard' failed: timed out after 0.3s"
    if on_error == "warn":
        assert outcome.notices == ("hook 'guard' (preToolCall) failed: timed out after 0.3s",)
    if on_error == "ignore":
        assert (outcome.notices, outcome.errors) == ((), ())
    group_gone(read_pid(tmp_path / "pid"))


def test_sigterm_ignorer_is_killed_after_the_grace(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
) -> None:
    engine = make_engine(
        guard(f"trap '' TERM; echo $$ > {tmp_path}/pid; sleep 30", timeout=TIMEOUT, onError="fail")
    )
    started = time.monotonic()
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert TIMEOUT + KILL_GRACE <= time.monotonic() - started < SLEEPER_S
    assert outcome.blocked
    assert "timed out" in (outcome.reason or "")
    group_gone(read_pid(tmp_path / "pid"))


_REPORT_SIZE = """n=$(wc -c); printf '{"message": "read %s"}' "$n" """


@pytest.mark.parametrize(
    ("command", "notice"),
    [
        ("""sleep 0.2; echo '{"message": "did not read"}'""", "did not read"),
        (_REPORT_SIZE, "read {size}"),
        ("sleep 0.2; " + _REPORT_SIZE, "read {size}"),
    ],
    ids=["ignorer", "reader", "late-reader"],
)
def test_a_large_payload_never_deadlocks(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    command: str,
    notice: str,
) -> None:
    engine = make_engine(
        {"preGeneration": [{"name": "h", "command": f"echo $$ > {tmp_path}/pid; {command}"}]}
    )
    payload = {"prompt": "p" * BIG}
    envelope = {"event": "preGeneration", "session_id": engine.session_id, "cwd": os.getcwd()}
    size = len(FORMATS["native"].encode(EVENTS["preGeneration"], {**envelope, **payload}))
    outcome = run_hooks(engine, "preGeneration", payload)
    assert outcome.allowed
    assert outcome.errors == ()
    assert outcome.notices == ("h: " + notice.format(size=size),)
    group_gone(read_pid(tmp_path / "pid"))


def test_a_stalled_hook_with_a_large_payload_is_still_timed_out(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
) -> None:
    """Never reads, never exits: writing its stdin must not keep the timeout from firing."""
    engine = make_engine(
        {
            "preGeneration": [
                {
                    "name": "h",
                    "command": f"echo $$ > {tmp_path}/pid; sleep 30",
                    "timeout": TIMEOUT,
                    "onError": "fail",
                }
            ]
        }
    )
    outcome = run_hooks(engine, "preGeneration", {"prompt": "p" * BIG})
    assert outcome.blocked
    assert outcome.reason == "hook 'h' failed: timed out after 0.3s"
    group_gone(read_pid(tmp_path / "pid"))


def test_grandchild_holding_stdout_after_the_hook_exits(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    pid_alive: Callable[[int], bool],
) -> None:
    engine = make_engine(
        guard(
            f"echo $$ > {tmp_path}/pid; sleep 30 & echo $! > {tmp_path}/kid; "
            'echo \'{"message": "done"}\''
        )
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.allowed
    assert outcome.notices == ("guard: done",)
    assert not pid_alive(read_pid(tmp_path / "kid"))
    group_gone(read_pid(tmp_path / "pid"))


@pytest.mark.parametrize("fmt", ["native", "mecatl"])
def test_an_output_flood_is_bounded(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    fmt: str,
) -> None:
    engine = make_engine(
        guard(f"echo $$ > {tmp_path}/pid; head -c {FLOOD} /dev/zero | tr '\\0' a", format=fmt)
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.allowed
    if fmt == "native":  # not a JSON reply: the hook failed, under `warn`
        assert len(outcome.errors) == 1
        assert "passed the output cap" in outcome.errors[0].message
    else:  # mecatl: a plain message, capped with the output
        assert outcome.errors == ()
        assert outcome.notices == ("guard: " + "a" * OUTPUT_CAP,)
    group_gone(read_pid(tmp_path / "pid"))


def test_an_endless_flood_is_stopped_at_the_timeout(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
) -> None:
    engine = make_engine(
        guard(f"echo $$ > {tmp_path}/pid; cat /dev/zero", timeout=TIMEOUT, onError="fail")
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert outcome.reason == "hook 'guard' failed: timed out after 0.3s"
    group_gone(read_pid(tmp_path / "pid"))


@pytest.mark.parametrize(("on_error", "blocked"), [("warn", False), ("fail", True)])
def test_bad_json_from_a_native_hook_is_a_failure_not_an_allow(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    on_error: str,
    blocked: bool,
) -> None:
    engine = make_engine(
        guard(f'echo $$ > {tmp_path}/pid; echo \'{{"action": "block"\'', onError=on_error)
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked is blocked
    assert len(outcome.errors) == 1
    assert outcome.errors[0].message.startswith("stdout is not a JSON object")
    assert outcome.payload == SHELL_CALL
    group_gone(read_pid(tmp_path / "pid"))


def test_bad_json_from_a_mecatl_hook_is_a_plain_message(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
) -> None:
    """The contract: stdout that is not a JSON object is a message; the payload stands."""
    engine = make_engine(
        guard(f"echo $$ > {tmp_path}/pid; echo '{{\"mutated\": '", format="mecatl")
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.allowed
    assert outcome.errors == ()
    assert outcome.notices == ('guard: {"mutated":',)
    assert outcome.payload == SHELL_CALL
    group_gone(read_pid(tmp_path / "pid"))


@pytest.mark.parametrize(
    ("event", "payload", "mutated"),
    [
        ("postToolCall", {"tool": "shell", "arguments": {}, "result": {"content": "x", "is_error": False}},
         '{"content": 5, "is_error": false}'),
        ("postToolCall", {"tool": "shell", "arguments": {}, "result": {"content": "x", "is_error": False}},
         '{"content": "y"}'),
        ("preToolCall", SHELL_CALL, '"rm -rf /"'),
        ("preGeneration", {"prompt": "hi"}, '{"text": "hi"}'),
    ],
    ids=["result-type", "result-keys", "arguments-not-object", "prompt-keys"],
)  # fmt: skip
def test_a_wrong_shape_mutation_is_not_applied_and_the_hook_failed(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    event: str,
    payload: dict[str, Any],
    mutated: str,
) -> None:
    script = f"echo $$ > {tmp_path}/pid; echo '{{\"mutated\": {mutated}}}'"
    engine = make_engine({event: [{"name": "m", "command": script, "format": "mecatl"}]})
    outcome = run_hooks(engine, event, payload)
    assert outcome.payload == payload
    assert outcome.changed == ()
    assert len(outcome.errors) == 1
    assert "'mutated'" in outcome.errors[0].message
    # preGeneration is fail-safe by default: the failure ends the turn.
    assert outcome.blocked is (event == "preGeneration")
    group_gone(read_pid(tmp_path / "pid"))


def _exit_command(tmp_path: Path, code: int) -> str:
    if code == 126:  # a real "not executable": a script without its x bit
        script = tmp_path / "no-x-bit.sh"
        script.write_text("#!/bin/sh\nexit 0\n")
        return str(script)
    if code == 127:  # a real "not found"
        return "definitely-not-a-hookgate-hook"
    return f"exit {code}"


@pytest.mark.parametrize("fmt", ["native", "mecatl"])
@pytest.mark.parametrize("code", [1, 126, 127])
def test_exit_1_126_127_are_hook_errors_never_blocks(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    fmt: str,
    code: int,
) -> None:
    command = f"echo $$ > {tmp_path}/pid; " + _exit_command(tmp_path, code)
    engine = make_engine(guard(command, format=fmt))  # onError: warn, the default
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.allowed
    assert len(outcome.errors) == 1
    assert outcome.errors[0].message.startswith(f"exit {code}")
    group_gone(read_pid(tmp_path / "pid"))


@pytest.mark.parametrize("code", [126, 127])
def test_exit_126_127_under_fail_block_as_a_failure(
    tmp_path: Path, make_engine: MakeEngine, run_hooks: RunHooks, code: int
) -> None:
    engine = make_engine(guard(_exit_command(tmp_path, code), onError="fail"))
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert (outcome.reason or "").startswith(f"hook 'guard' failed: exit {code}")


def test_a_missing_program_in_exec_form_is_a_failure(
    tmp_path: Path, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(
        {"preToolCall": [{"name": "g", "args": [str(tmp_path / "missing")], "onError": "fail"}]}
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert "failed: cannot run" in (outcome.reason or "")


@pytest.mark.parametrize("fmt", ["native", "mecatl"])
def test_exit_2_is_a_deliberate_block(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    fmt: str,
) -> None:
    engine = make_engine(
        guard(f"echo $$ > {tmp_path}/pid; echo 'not on my watch'; exit 2", format=fmt)
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert outcome.reason == "not on my watch"
    assert outcome.blocked_by == "guard"
    assert outcome.errors == ()
    group_gone(read_pid(tmp_path / "pid"))


@pytest.mark.parametrize("fmt", ["native", "mecatl"])
def test_non_utf8_block_reason_is_read_with_replacements(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    fmt: str,
) -> None:
    engine = make_engine(
        guard(f"echo $$ > {tmp_path}/pid; printf 'caf\\351 \\377 closed'; exit 2", format=fmt)
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert outcome.reason == "caf\ufffd \ufffd closed"
    group_gone(read_pid(tmp_path / "pid"))


def test_non_utf8_inside_a_native_reply_is_replaced(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(guard('printf \'{"message": "caf\\351"}\''))
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.allowed
    assert outcome.notices == ("guard: caf\ufffd",)


def test_non_utf8_stdout_of_a_mecatl_hook_is_a_message(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(guard("printf '\\377\\376 hello'", format="mecatl"))
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.allowed
    assert outcome.notices == ("guard: \ufffd\ufffd hello",)


def test_non_utf8_stderr_of_a_failed_hook_is_reported(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    engine = make_engine(guard("printf 'bad \\377 news' >&2; exit 1"))
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.errors[0].message == "exit 1: bad \ufffd news"


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGSEGV])
def test_a_hook_killed_by_a_signal_has_failed(
    tmp_path: Path,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    signum: int,
) -> None:
    name = signal.Signals(signum).name[3:]
    engine = make_engine(
        guard(f"echo $$ > {tmp_path}/pid; sleep 30 & kill -{name} $$", onError="fail")
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert outcome.reason == f"hook 'guard' failed: killed by signal {int(signum)}"
    group_gone(read_pid(tmp_path / "pid"))


def _zombie_children() -> list[int]:
    zombies = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat_file.read_text()
        except OSError:
            continue
        state, ppid = text[text.rindex(")") + 2 :].split()[:2]
        if state == "Z" and int(ppid) == os.getpid():
            zombies.append(int(stat_file.parent.name))
    return zombies


def test_many_hooks_with_orphans_leave_no_zombie_behind(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    """Each hook orphans a `sleep`: it is killed, reparented to us (the subreaper), reaped."""
    engine = make_engine(guard("sleep 30 & echo '{}'"))
    for _ in range(5):
        assert run_hooks(engine, "preToolCall", SHELL_CALL).errors == ()
    assert _zombie_children() == []


@pytest.mark.parametrize("through", ["libc", "os.waitpid"])
def test_a_killed_group_s_adopted_members_are_reaped_and_an_empty_group_returns(
    monkeypatch: pytest.MonkeyPatch, through: str
) -> None:
    """`reap_group` waits for each member of the group that was reparented to us (the
    subreaper), and returns at once where none is ours (the usual hook)."""
    assert subreaper.adopting  # tests/conftest.py adopts, as a runtime does
    if through == "os.waitpid":  # a subreaper made without `adopt_orphans`' libc
        monkeypatch.setattr(subreaper, "_waitpid", None)
    read, write = os.pipe()
    leader = os.posix_spawn(
        "/bin/sh", ["/bin/sh", "-c", "sleep 30 & echo $!"], dict(os.environ),
        file_actions=[(os.POSIX_SPAWN_DUP2, write, 1)], setsid=True,
    )  # fmt: skip
    os.close(write)
    orphan = int(os.read(read, 64))
    os.close(read)
    os.waitpid(leader, 0)  # the shell is gone: its `sleep` is ours now, in its group
    os.killpg(leader, signal.SIGKILL)
    subreaper.reap_group(leader)
    with pytest.raises(ChildProcessError):  # reaped: no longer a child of ours
        os.waitpid(orphan, os.WNOHANG)
    subreaper.reap_group(leader)  # nothing of ours left in it: returns
    assert _zombie_children() == []


#: The steps just after the child has started where a Ctrl-C can land, each replaced
#: below by one that raises KeyboardInterrupt (as a SIGINT handled right then would):
#: once posix_spawn has returned (the interrupt loses the pid), once the child is
#: tracked, before its pidfd is opened.
_AFTER_THE_START = {
    "spawn returned": (os, "posix_spawn"),
    "tracked": (process_core, "track"),
    "before the pidfd": (process_core, "_open_pidfd"),
}


@pytest.mark.parametrize("step", list(_AFTER_THE_START))
def test_a_ctrl_c_right_after_the_start_still_stops_the_child(
    monkeypatch: pytest.MonkeyPatch, run: Run, step: str, group_gone: Callable[[int], None]
) -> None:
    """However early the interrupt comes, the child is killed and reaped, and its fds
    closed: a Ctrl-C of `hooks fire` must not leave behind a hook that nothing stops."""
    module, name = _AFTER_THE_START[step]
    real = getattr(module, name)
    started: list[int] = []

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        if step == "before the pidfd":
            started.append(args[0])
        else:
            answer = real(*args, **kwargs)
            started.append(answer if step == "spawn returned" else args[0])
        raise KeyboardInterrupt

    before = _open_fds()
    monkeypatch.setattr(module, name, interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(["/bin/sh", "-c", "exec sleep 30"], timeout=30)
    monkeypatch.undo()
    assert len(started) == 1
    group_gone(started[0])
    assert_no_fd_left(before, _open_fds())


def test_programs_path_leaves_out_the_working_directory_and_the_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "alias").symlink_to(project)
    value = os.pathsep.join(
        [".", "", "bin", "/usr/bin", str(project), str(tmp_path / "alias"), "/nowhere", "/bin"]
    )

    assert programs_path(value, str(project)) == os.pathsep.join(["/usr/bin", "/nowhere", "/bin"])
    assert programs_path(value) == os.pathsep.join(
        ["/usr/bin", str(project), str(tmp_path / "alias"), "/nowhere", "/bin"]
    )
