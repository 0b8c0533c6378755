"""Persistent hooks: one process per hook and session, asked event after event.

A `persistent: true` hook starts at its first event and stays. Each event is one line
on its stdin, `{"id": N, "event": EVENT}` (EVENT: what its format writes to a process
hook's stdin), and it answers with one line on stdout, `{"id": N, "reply": REPLY}`,
with `"exit"` and `"stderr"` when it means what a process hook's exit status and stderr
would; REPLY is what such a hook would print (an object, a string, or null). The
reply goes through the hook's format like a process hook's output. A reply that is
late, malformed, for another id or too long, or a process that dies, fails that
event (its `onError` decides) and the process is stopped; the next event starts a new
one after a backoff that doubles with each failure in a row (`RESTART_BACKOFF`). One
that ended while idle is found out by the next event (no reader for its line, or the
line left unread when it exits: `ResidentGone`), which goes to a new process instead.
`PersistentHooks.close` (or `aclose`) stops them all with the session.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hookgate.hooks.kinds.persistent.lines import ResidentFailure, ResidentGone
from hookgate.hooks.kinds.persistent.resident import Resident, running_loop
from hookgate.hooks.kinds.persistent.turn import Turn
from hookgate.hooks.process import Input, ProcessResult

if TYPE_CHECKING:
    import asyncio

    from hookgate.hooks.config import HookSpec

#: Seconds before the first restart after a failure; each failure in a row doubles it.
RESTART_BACKOFF = 0.05
#: The longest wait between two starts of a hook that keeps failing.
RESTART_BACKOFF_MAX = 10.0


@dataclass
class _Slot:
    """One persistent hook's process, the next event id, and its failures in a row."""

    resident: Resident | None = None
    next_id: int = 1
    failures: int = 0
    retry_at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    turns: dict[asyncio.AbstractEventLoop, Turn] = field(default_factory=dict)

    def failed(self) -> None:
        self.failures += 1
        delay = min(RESTART_BACKOFF * 2 ** (self.failures - 1), RESTART_BACKOFF_MAX)
        self.retry_at = time.monotonic() + delay

    def usable(self) -> Resident | None:
        """The running process, unless it is known to have ended (the event loop saw
        it): that counts as a failure, for the backoff. One that ended unseen is found
        out by the event written to it (`ResidentGone`)."""
        resident = self.resident
        if resident is None or resident.stopped:
            return None
        if resident.process.exited:
            self.failed()
            return None
        return resident

    def restart_delay(self, deadline: float) -> float:
        """Seconds to wait before the process may start again; raises if past `deadline`."""
        wait = self.retry_at - time.monotonic()
        if wait > 0 and self.retry_at >= deadline:
            raise ResidentFailure(
                f"restarting after {self.failures} failure{'s' if self.failures > 1 else ''} "
                f"in a row; the next start is in {wait:.2f}s"
            )
        return max(wait, 0.0)

    def take_number(self) -> int:
        """The next event's id."""
        number, self.next_id = self.next_id, self.next_id + 1
        return number


def event_line(number: int, event: Input) -> bytes | Iterator[bytes]:
    """Event `number`'s line, `{"id": N, "event": EVENT}`: whole, or in pieces made as
    they are written where `event` is a function that makes pieces (a large event:
    `steps.resident_input`), so that it is never held whole."""
    made = event() if callable(event) else event
    if not isinstance(made, bytes):
        return _line_in_pieces(number, made)
    # `find`, not `in`: `in` tries a bytes operand as an integer first, and raises and
    # clears a TypeError for it, which costs more than the rest of this function.
    if made.find(b"\n") >= 0:  # a format that indents its JSON: one line on the wire
        made = json.dumps(json.loads(made), ensure_ascii=False).encode()
    return b'{"id":%d,"event":%s}\n' % (number, made)


def _line_in_pieces(number: int, pieces: Iterator[bytes]) -> Iterator[bytes]:
    # The formats that make pieces write compact JSON: no line's end inside.
    yield b'{"id":%d,"event":' % number
    yield from pieces
    yield b"}\n"


class PersistentHooks:
    """The persistent hooks of one engine: each one's process, started at its first event.

    A hook answers one event at a time: `ask` and `ask_sync` wait for its turn (from
    one thread, or one event loop, at a time).
    """

    def __init__(self) -> None:
        self._slots: dict[int, _Slot] = {}

    def ask_sync(
        self, hook: HookSpec, event: Input, *, env: Mapping[str, str], cwd: str | None
    ) -> ProcessResult:
        """The hook's reply to `event`, as the `ProcessResult` a process hook would leave.

        `event` is the bytes its format writes, or a function that makes them, whole or
        in pieces (`event_line`); called again where the event goes to a new process."""
        deadline = time.monotonic() + hook.timeout
        slot = self._slots.get(id(hook)) or self._slot(hook)
        # A free lock is taken without its timeout: parsing that keyword argument costs
        # more than the acquire itself.
        if not (slot.lock.acquire(False) or slot.lock.acquire(timeout=hook.timeout)):
            raise TimeoutError
        try:
            resident = slot.usable()
            fresh = resident is None
            if resident is None:
                resident = self._start_sync(slot, hook, deadline, env=env, cwd=cwd)
            number = slot.take_number()
            while True:
                line = event_line(number, event)
                try:
                    result = _result(resident.ask_sync(line, deadline), number)
                except (TimeoutError, ResidentFailure) as exc:
                    # A failure counts for the backoff and stops the process.
                    slot.failed()
                    resident.stop_sync()
                    if fresh or not isinstance(exc, ResidentGone):
                        raise
                except BaseException:  # KeyboardInterrupt: its reply would answer the next event
                    slot.failed()
                    resident.kill()
                    raise
                else:
                    slot.failures = 0  # "in a row": a good reply ends the series
                    return result
                # It ended while idle, unseen: the event goes to a new one.
                resident = self._start_sync(slot, hook, deadline, env=env, cwd=cwd)
                fresh = True
        finally:
            slot.lock.release()

    @staticmethod
    def _start_sync(
        slot: _Slot, hook: HookSpec, deadline: float, *, env: Mapping[str, str], cwd: str | None
    ) -> Resident:
        if slot.resident is not None:
            slot.resident.stop_sync()
        time.sleep(slot.restart_delay(deadline))
        slot.resident = Resident.start(hook.argv(), env=env, cwd=cwd)
        return slot.resident

    async def ask(
        self, hook: HookSpec, event: Input, *, env: Mapping[str, str], cwd: str | None
    ) -> ProcessResult:
        """`ask_sync` on the event loop: the loop serves others while the hook works."""
        deadline = time.monotonic() + hook.timeout
        slot = self._slots.get(id(hook)) or self._slot(hook)
        loop = running_loop()
        turn = slot.turns.get(loop) or slot.turns.setdefault(loop, Turn())
        if turn.busy:  # another event has its turn: wait for it, within our timeout
            await turn.wait(loop, hook.timeout)
        else:
            turn.busy = True
        try:
            resident = slot.usable()
            fresh = resident is None
            if resident is None:
                resident = await self._start(slot, hook, deadline, env=env, cwd=cwd)
            number = slot.take_number()
            while True:  # as in `ask_sync`, in this one coroutine: another costs each event more
                line = event_line(number, event)
                try:
                    result = _result(await resident.ask(line, deadline, loop), number)
                except (TimeoutError, ResidentFailure) as exc:
                    slot.failed()
                    await resident.stop()
                    if fresh or not isinstance(exc, ResidentGone):
                        raise
                except BaseException:  # cancelled: its reply would answer the next event
                    slot.failed()
                    resident.kill()
                    raise
                else:
                    slot.failures = 0
                    return result
                # It ended while idle, unseen: the event goes to a new one.
                resident = await self._start(slot, hook, deadline, env=env, cwd=cwd)
                fresh = True
        finally:
            turn.release()

    @staticmethod
    async def _start(
        slot: _Slot, hook: HookSpec, deadline: float, *, env: Mapping[str, str], cwd: str | None
    ) -> Resident:
        import asyncio

        async with asyncio.timeout(max(deadline - time.monotonic(), 0)):
            if slot.resident is not None:
                await slot.resident.stop()
            await asyncio.sleep(slot.restart_delay(deadline))
            slot.resident = Resident.start(hook.argv(), env=env, cwd=cwd)
            return slot.resident

    def _slot(self, hook: HookSpec) -> _Slot:
        slot = self._slots.get(id(hook))  # a new `_Slot` (a lock, a dict) only the first time
        return slot if slot is not None else self._slots.setdefault(id(hook), _Slot())

    def close(self) -> None:
        """Stop every process (without an event loop: from `run_sync`'s side)."""
        slots, self._slots = list(self._slots.values()), {}
        for slot in slots:
            if slot.resident is not None:
                slot.resident.stop_sync()

    async def aclose(self) -> None:
        """Stop every process, on the event loop."""
        slots, self._slots = list(self._slots.values()), {}
        for slot in slots:
            if slot.resident is not None:
                await slot.resident.stop()


_DECODER = json.JSONDecoder()
#: The keys a reply line may have.
_REPLY_KEYS = frozenset({"id", "reply", "exit", "stderr"})


#: Reply lines seen before, past their id: what each one said. A hook answers most
#: events with one of a few lines (`"reply": null}`, a deny it repeats): those are
#: checked once, then read in a dict look-up.
_KNOWN_TAILS: dict[bytes, ProcessResult] = {}
#: How many tails are remembered, and how long each may be.
_KNOWN_TAILS_MAX = 256
_KNOWN_TAIL_LEN = 512


def _result(line: bytes, number: int) -> ProcessResult:
    """A reply line as the `ProcessResult` a process hook would have left (its
    `duration` 0: nothing reads it, and the hook's process did not end)."""
    tail = _tail_after_id(line, number)
    result = _KNOWN_TAILS.get(tail) if tail is not None else None
    if result is None:
        result = _checked(line, number)
        if tail is not None and len(tail) <= _KNOWN_TAIL_LEN and _tail_is_whole(tail):
            if len(_KNOWN_TAILS) >= _KNOWN_TAILS_MAX:
                _KNOWN_TAILS.clear()
            _KNOWN_TAILS[tail] = result
    return result


def _tail_after_id(line: bytes, number: int) -> bytes | None:
    """What follows `{"id": NUMBER,` (with a space or without) in `line`, or None."""
    head = b'{"id": %d,' % number  # `json.dumps`'s spacing, the usual one: tried first
    if line.startswith(head) or line.startswith(head := b'{"id":%d,' % number):
        return line[len(head) :]
    return None


def _tail_is_whole(tail: bytes) -> bool:
    """Whether `tail` reads as the same reply after any id: an object of its own that
    names no id (a second `id` would override the first)."""
    try:
        rest = _DECODER.decode("{" + tail.decode())
    except (ValueError, RecursionError):
        return False
    return type(rest) is dict and "id" not in rest


def _checked(line: bytes, number: int) -> ProcessResult:
    """A reply line, checked whole, as the `ProcessResult` it stands for."""
    try:
        reply = _DECODER.decode(line.decode())  # UTF-8, as the protocol says
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ResidentFailure(f"replied with a line that is not JSON: {_excerpt(line)}") from exc
    if type(reply) is not dict or reply.get("id") != number:
        raise ResidentFailure(
            f'replied {_excerpt(line)} to event {number}: expected {{"id": {number}, ...}}'
        )
    code, stderr = reply.get("exit", 0), reply.get("stderr", "")
    if not reply.keys() <= _REPLY_KEYS or type(code) is not int or type(stderr) is not str:
        raise ResidentFailure(
            f"replied {_excerpt(line)}: a reply has id, reply, an integer exit and a string "
            "stderr, nothing else"
        )
    return ProcessResult(
        returncode=code, stdout=_stdout_of(reply.get("reply")),
        stderr=stderr.encode("utf-8", "surrogateescape"), stdout_truncated=False,
        stderr_truncated=False, timed_out=False, duration=0.0,
    )  # fmt: skip


def _stdout_of(reply: Any) -> bytes:
    if reply is None:
        return b""
    if isinstance(reply, str):
        return reply.encode("utf-8", "surrogateescape")
    return json.dumps(reply, ensure_ascii=False).encode("utf-8", "surrogateescape")


def _excerpt(line: bytes, limit: int = 120) -> str:
    text = line.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "…")


__all__ = ["PersistentHooks", "ResidentFailure"]
