"""Persistent hooks that crash, hang, flood, answer garbage or kill their own group.

Under both drivers (`await engine.run` on one event loop, `engine.run_sync`): the event
the fault hits follows the hook's `onError`, in bounded time; the next event is
answered by a new process; closing the engine leaves no process, zombie or fd behind.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import HookEngine, Outcome, parse_hooks
from hookgate.hooks.files.yamlfile import Where
from hookgate.hooks.formats.base import BIG
from hookgate.hooks.kinds.persistent.lines import LINE_CAP
from hookgate.hooks.process.guard import guard_token
from reliability.faultkit import HANG_TIMEOUT_S, TURN_MARGIN_S, assert_nothing_left, bounded

#: The child: one JSON line in, one out; the event's command says how to misbehave.
CHILD = textwrap.dedent("""
    import json, os, signal, subprocess, sys, time
    with open(sys.argv[1], "a") as pids:
        print(os.getpid(), file=pids)
    for line in sys.stdin:
        message = json.loads(line)
        what = message["event"]["arguments"]["command"]
        if what == "crash":
            subprocess.Popen(["sleep", "60"])  # holds stdout: not waited for
            sys.exit(1)
        if what == "hang":
            time.sleep(60)
        if what == "slow":
            time.sleep(0.3)
        if what.startswith("until "):  # answers once the file it names exists (30 s at most)
            for _ in range(3000):
                if os.path.exists(what[len("until "):]):
                    break
                time.sleep(0.01)
        if what == "flood":
            sys.stdout.write("x" * (LINE_LIMIT + 4096))
            sys.stdout.flush()
            time.sleep(60)
        if what == "garbage":
            print("\\x00\\xff not json", flush=True)
        if what == "at the cap":  # a reply as long as a line may be, then its line's end
            reply = json.dumps({"id": message["id"], "reply": None})
            print(reply.ljust(LINE_LIMIT), flush=True)
            continue
        if what == "not utf-8":  # JSON in shape, but the protocol's text is UTF-8
            sys.stdout.buffer.write(b'{"id": %d, "reply": "\\xff"}\\n' % message["id"])
            sys.stdout.flush()
        if what == "wrong id":
            print(json.dumps({"id": message["id"] + 1}), flush=True)
        if what == "kill group":
            subprocess.Popen(["sleep", "60"])
            os.killpg(0, signal.SIGKILL)
        if what.startswith("last"):  # answers, then ends while idle
            if what == "last, a grandchild keeps the pipes":
                subprocess.Popen(["sleep", "60"])
            print(json.dumps({"id": message["id"], "reply": None}), flush=True)
            sys.exit(0)
        reply = {"action": "deny", "reason": "no"} if what == "deny" else None
        if what.startswith("long"):  # a large event, read whole: its length is the reason
            reply = {"action": "deny", "reason": str(len(what))}
        print(json.dumps({"id": message["id"], "reply": reply}), flush=True)
""").replace("LINE_LIMIT", str(LINE_CAP))
#: Each fault and what the failure says.
FAULTS = {
    "crash": "exited with status 1 before it replied",
    "hang": f"timed out after {HANG_TIMEOUT_S:g}s",
    "flood": f"a reply line passed {LINE_CAP:,} bytes",
    "garbage": "replied with a line that is not JSON",
    "not utf-8": "replied with a line that is not JSON",
    "wrong id": "replied '{\"id\": 3}' to event 2",
    "kill group": "was killed by signal 9 before it replied",
}


class Driver:
    """One engine driven event after event: on one event loop, or with `run_sync`."""

    def __init__(self, kind: str, engine: HookEngine) -> None:
        self.kind = kind
        self.engine = engine
        self._runner = asyncio.Runner() if kind == "async" else None
        self.closed = False

    def fire(self, command: str) -> Outcome:
        payload = {"tool": "shell", "arguments": {"command": command}}
        if self._runner is None:
            return self.engine.run_sync("preToolCall", payload)
        return self._runner.run(self.engine.run("preToolCall", payload))

    def close(self) -> None:
        if self._runner is None:
            self.engine.close()
        elif not self.closed:
            self._runner.run(self.engine.aclose())
            self._runner.close()
        self.closed = True


@pytest.fixture(params=["async", "sync"])
def drive(
    request: pytest.FixtureRequest, tmp_path: Path, mark: str
) -> Iterator[Callable[..., Driver]]:
    """`drive(**hook_entry_options)`: a `Driver` of an engine with the persistent child."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    drivers: list[Driver] = []

    def make(**options: Any) -> Driver:
        entry = {"name": "resident", "args": [sys.executable, str(script), str(tmp_path / "pids")],
                 "persistent": True, "onError": "fail", "timeout": 10, **options}  # fmt: skip
        config = parse_hooks({"preToolCall": [entry]}, Where("test.yaml"), base_dir=tmp_path)
        driver = Driver(
            request.param, HookEngine(config, session_id="s", project_dir=str(tmp_path))
        )
        drivers.append(driver)
        return driver

    yield make
    for driver in drivers:
        driver.close()


def starts(tmp_path: Path) -> list[int]:
    """The pid of each process the hook started, in order."""
    path = tmp_path / "pids"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def zombies() -> list[int]:
    """Our children that have exited but were never reaped."""
    found = []
    for listing in Path("/proc/self/task").glob("*/children"):
        for pid in listing.read_text().split():
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            if stat[stat.rindex(")") + 2] == "Z":
                found.append(int(pid))
    return found


def open_fds() -> set[str]:
    guard_token()  # the guardian's pipe, open for the life of the process: not the hook's
    return set(os.listdir("/proc/self/fd"))


def assert_closed_cleanly(driver: Driver, mark: str, fds: set[str]) -> None:
    """Closing the engine leaves no process, zombie or fd of the hook's behind."""
    driver.close()
    assert_nothing_left(mark)
    assert zombies() == []
    assert open_fds() <= fds


def assert_allowed(outcome: Outcome) -> None:
    assert not outcome.blocked, outcome
    assert not outcome.errors, outcome


@pytest.mark.reliability("hooks")
def test_a_persistent_hook_answers_every_event_from_one_process(
    drive: Callable[..., Driver], tmp_path: Path, mark: str
) -> None:
    """A persistent hook starts once, at its first event, and answers each in order."""
    fds = open_fds()
    driver = drive()
    assert starts(tmp_path) == []  # nothing runs before the first event
    for _ in range(3):
        assert_allowed(driver.fire("ls"))
    denied = driver.fire("deny")
    assert denied.blocked
    assert denied.reason == "no"
    assert_allowed(driver.fire("ls"))
    assert len(starts(tmp_path)) == 1
    assert_closed_cleanly(driver, mark, fds)


@pytest.mark.reliability("hooks")
@pytest.mark.parametrize("fault", FAULTS)
def test_a_faulty_persistent_hook_fails_its_event_and_is_restarted(
    drive: Callable[..., Driver], tmp_path: Path, mark: str, fault: str
) -> None:
    """A persistent hook's fault fails that event under onError; a new process answers the next."""
    fds = open_fds()
    driver = drive(timeout=HANG_TIMEOUT_S) if fault == "hang" else drive()
    assert_allowed(driver.fire("ls"))
    with bounded(HANG_TIMEOUT_S + TURN_MARGIN_S):
        failed = driver.fire(fault)
    assert failed.blocked, failed
    assert f"hook 'resident' failed: {FAULTS[fault]}" in (failed.reason or ""), failed.reason
    assert_allowed(driver.fire("ls"))
    assert len(starts(tmp_path)) == 2
    assert_closed_cleanly(driver, mark, fds)


@pytest.mark.reliability("hooks")
def test_a_reply_as_long_as_a_line_may_be_is_no_flood(
    drive: Callable[..., Driver], tmp_path: Path, mark: str
) -> None:
    """A reply of exactly `LINE_CAP` bytes is a reply: the same process answers the
    events after it, on the event loop too, which stops reading at the cap (a flood
    would hold it) and must read again once the reply is taken."""
    fds = open_fds()
    driver = drive()
    assert_allowed(driver.fire("at the cap"))
    with bounded(TURN_MARGIN_S + 1):
        assert_allowed(driver.fire("slow"))  # 0.3 s: waited for on the loop
    assert_allowed(driver.fire("ls"))
    assert len(starts(tmp_path)) == 1
    assert_closed_cleanly(driver, mark, fds)


@pytest.mark.reliability("hooks")
@pytest.mark.parametrize("on_error", ["warn", "ignore"])
def test_a_persistent_hooks_failure_follows_its_on_error(
    drive: Callable[..., Driver], on_error: str
) -> None:
    """Under warn the failed event goes on with a notice; under ignore, silently."""
    driver = drive(onError=on_error)
    outcome = driver.fire("crash")
    assert not outcome.blocked
    assert len(outcome.notices) == (1 if on_error == "warn" else 0), outcome


@pytest.mark.reliability("hooks")
def test_a_persistent_hook_killed_between_events_is_restarted_for_the_next(
    drive: Callable[..., Driver], tmp_path: Path, mark: str
) -> None:
    """A process killed while idle is started anew; the next event does not fail."""
    driver = drive()
    assert_allowed(driver.fire("ls"))
    (pid,) = starts(tmp_path)
    os.killpg(pid, 9)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # dead, and still ours to reap
    assert_allowed(driver.fire("ls"))
    assert len(starts(tmp_path)) == 2
    driver.close()
    assert_nothing_left(mark)
    assert zombies() == []


@pytest.mark.reliability("hooks")
@pytest.mark.parametrize("last", ["last", "last, a grandchild keeps the pipes"])
def test_a_persistent_hook_that_ends_after_its_reply_is_restarted_for_the_next(
    drive: Callable[..., Driver], tmp_path: Path, mark: str, last: str
) -> None:
    """A process that ends while idle, found out by the next event written to it
    (nothing reads it, or it ends with the event unread), is started anew for it."""
    fds = open_fds()
    driver = drive()
    assert_allowed(driver.fire(last))
    assert_allowed(driver.fire("ls"))
    assert len(starts(tmp_path)) == 2
    assert_closed_cleanly(driver, mark, fds)


def state(pid: int) -> str:
    """`pid`'s state letter in /proc (`Z`: a zombie), or "gone"."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "gone"
    return stat[stat.rindex(")") + 2]


@pytest.mark.reliability("hooks")
@pytest.mark.parametrize("last", ["last", "last, a grandchild keeps the pipes"])
def test_on_a_loop_a_persistent_hook_that_ends_while_idle_is_reaped_at_once(
    tmp_path: Path, mark: str, last: str
) -> None:
    """The event loop watches the process's exit: one that ends between events is
    reaped then, what is left of its group killed, not left a zombie until the next
    event (which may be hours away in an editor's session). The next event starts a
    new process, as before."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    entry = {"name": "resident", "args": [sys.executable, str(script), str(tmp_path / "pids")],
             "persistent": True, "onError": "fail"}  # fmt: skip
    config = parse_hooks({"preToolCall": [entry]}, Where("test.yaml"), base_dir=tmp_path)
    engine = HookEngine(config, session_id="s", project_dir=str(tmp_path))
    payload = {"tool": "shell", "arguments": {"command": last}}

    async def idle_then_ls() -> tuple[str, Outcome]:
        assert_allowed(await engine.run("preToolCall", payload))
        first = starts(tmp_path)[0]
        for _ in range(500):  # the loop runs meanwhile: 10 s at most
            if state(first) == "gone":
                break
            await asyncio.sleep(0.02)
        seen = state(first)
        try:
            return seen, await engine.run(
                "preToolCall", {**payload, "arguments": {"command": "ls"}}
            )
        finally:
            await engine.aclose()

    seen, after = asyncio.run(idle_then_ls())
    assert seen == "gone"  # reaped while idle, not a zombie
    assert_allowed(after)
    assert len(starts(tmp_path)) == 2
    assert_nothing_left(mark)
    assert zombies() == []


@pytest.mark.reliability("hooks")
@pytest.mark.parametrize("last", ["last", "last, a grandchild keeps the pipes"])
def test_a_large_event_goes_whole_to_the_process_that_replaces_one_ended_while_idle(
    drive: Callable[..., Driver], tmp_path: Path, mark: str, last: str
) -> None:
    """A large event is written in pieces as they are made; the pieces the ended process
    took (a pipe's worth, where a grandchild keeps its stdin open) are made again, and
    its successor reads the whole event."""
    fds = open_fds()
    driver = drive()
    assert_allowed(driver.fire(last))
    command = "long " + "x" * (2 * BIG)
    outcome = driver.fire(command)
    assert (outcome.blocked, outcome.reason) == (True, str(len(command))), outcome
    assert len(starts(tmp_path)) == 2
    assert_closed_cleanly(driver, mark, fds)


@pytest.mark.reliability("hooks")
def test_a_persistent_hook_that_keeps_failing_backs_off(
    drive: Callable[..., Driver], tmp_path: Path
) -> None:
    """Failures in a row make the next start wait longer; past the timeout the event fails."""
    driver = drive(timeout=0.2)
    outcomes = [driver.fire("crash") for _ in range(6)]
    assert all(outcome.blocked for outcome in outcomes)
    assert "restarting after" in (outcomes[-1].reason or ""), outcomes[-1].reason
    assert len(starts(tmp_path)) < 6


@pytest.mark.reliability("hooks")
def test_a_good_reply_ends_the_backoff(drive: Callable[..., Driver], tmp_path: Path) -> None:
    """After a good reply the next failure waits the first backoff again, not a longer one."""
    driver = drive(timeout=0.3)  # the fourth doubling (0.4 s) would pass it
    for _ in range(4):
        assert driver.fire("crash").blocked
        assert_allowed(driver.fire("ls"))
    assert len(starts(tmp_path)) == 5


@pytest.mark.reliability("hooks")
def test_persistent_hooks_on_one_loop_answer_while_another_works(tmp_path: Path, mark: str) -> None:
    """While one persistent hook takes its time, the loop goes on: another session's hook
    answers event after event meanwhile, and both get their own replies. The slow one
    answers only once the quick one has answered ten: an order, whatever the load."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    entry = {"name": "resident", "args": [sys.executable, str(script), str(tmp_path / "pids")],
             "persistent": True, "onError": "fail"}  # fmt: skip
    config = parse_hooks({"preToolCall": [entry]}, Where("test.yaml"), base_dir=tmp_path)
    slow, quick = (HookEngine(config, session_id=s, project_dir=str(tmp_path)) for s in "ab")

    def fire(engine: HookEngine, command: str) -> Awaitable[Outcome]:
        return engine.run("preToolCall", {"tool": "shell", "arguments": {"command": command}})

    release = tmp_path / "release"

    async def both() -> tuple[Outcome, list[Outcome]]:
        await asyncio.gather(fire(slow, "ls"), fire(quick, "ls"))  # both started
        waiting = asyncio.ensure_future(fire(slow, f"until {release}"))
        answered: list[Outcome] = []
        while not waiting.done() and len(answered) < 10:
            answered.append(await fire(quick, "deny" if len(answered) % 2 else "ls"))
        release.touch()
        try:
            return await waiting, answered
        finally:
            await slow.aclose()
            await quick.aclose()

    slow_outcome, answered = asyncio.run(both())
    assert_allowed(slow_outcome)
    assert len(answered) == 10  # all while the slow one waited for them
    assert [outcome.blocked for outcome in answered] == [i % 2 == 1 for i in range(10)]
    assert len(starts(tmp_path)) == 2
    assert_nothing_left(mark)
    assert zombies() == []


@pytest.mark.reliability("hooks")
def test_a_cancelled_event_stops_its_persistent_hook(tmp_path: Path, mark: str) -> None:
    """Cancelling the caller mid-event kills the hook at once; the next event starts anew."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    entry = {"name": "resident", "args": [sys.executable, str(script), str(tmp_path / "pids")],
             "persistent": True, "timeout": 30}  # fmt: skip
    config = parse_hooks({"preToolCall": [entry]}, Where("test.yaml"), base_dir=tmp_path)
    engine = HookEngine(config, session_id="s", project_dir=str(tmp_path))
    payload = {"tool": "shell", "arguments": {"command": "hang"}}

    async def cancel_then_ask() -> Outcome:
        asking = asyncio.ensure_future(engine.run("preToolCall", payload))
        for _ in range(500):  # the child writes its pid once it runs: at most 5 s
            if starts(tmp_path):
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # it has the event now, and sleeps on it
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
        try:
            return await engine.run("preToolCall", {**payload, "arguments": {"command": "ls"}})
        finally:
            await engine.aclose()

    with bounded(TURN_MARGIN_S):
        outcome = asyncio.run(cancel_then_ask())
    assert_allowed(outcome)
    assert len(starts(tmp_path)) == 2
    assert_nothing_left(mark)
    assert zombies() == []
