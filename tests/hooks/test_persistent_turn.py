"""A persistent hook's turn on one event loop: one event at a time, first come, first
served; an event that gives up (its timeout, a cancellation) never keeps the turn."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from hookgate.hooks import HookEngine, parse_hooks
from hookgate.hooks.files.yamlfile import Where
from hookgate.hooks.kinds.persistent.turn import Turn


async def _take(turn: Turn, name: str, order: list[str], hold: float = 0.01) -> None:
    loop = asyncio.get_running_loop()
    if turn.busy:
        await turn.wait(loop, 5)
    else:
        turn.busy = True
    try:
        order.append(name)
        await asyncio.sleep(hold)
    finally:
        turn.release()


def test_events_take_the_turn_in_the_order_they_asked() -> None:
    async def main() -> list[str]:
        turn, order = Turn(), []
        await asyncio.gather(*(_take(turn, name, order) for name in "abcde"))
        assert not turn.busy
        return order

    assert asyncio.run(main()) == list("abcde")


def test_an_event_that_times_out_waiting_leaves_the_turn_to_the_next() -> None:
    async def main() -> tuple[list[str], bool]:
        turn, order = Turn(), []
        first = asyncio.ensure_future(_take(turn, "first", order, hold=0.2))
        await asyncio.sleep(0)
        with pytest.raises(TimeoutError):
            await turn.wait(asyncio.get_running_loop(), 0.01)
        await asyncio.gather(first, _take(turn, "after", order))
        return order, turn.busy

    assert asyncio.run(main()) == (["first", "after"], False)


def test_an_event_cancelled_as_it_is_handed_the_turn_passes_it_on() -> None:
    async def main() -> tuple[list[str], bool]:
        turn, order = Turn(), []
        turn.busy = True  # an event has the turn
        loop = asyncio.get_running_loop()
        cancelled = asyncio.ensure_future(turn.wait(loop, 5))
        waiting = asyncio.ensure_future(_take(turn, "next", order))
        await asyncio.sleep(0)
        turn.release()  # handed to `cancelled`, which is cancelled before it runs
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        await asyncio.wait_for(waiting, 5)
        return order, turn.busy

    assert asyncio.run(main()) == (["next"], False)


def test_events_asked_at_once_of_one_persistent_hook_each_get_their_reply(
    tmp_path: Path,
) -> None:
    """On one loop, a hook answers one event at a time: each gets its own reply."""
    child = tmp_path / "child.py"
    child.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    message = json.loads(line)\n"
        "    command = message['event']['arguments']['command']\n"
        "    print(json.dumps({'id': message['id'], 'reply': {'action': 'deny', "
        "'reason': command}}), flush=True)\n"
    )
    entry = {"args": [sys.executable, str(child)], "persistent": True, "onError": "fail"}
    config = parse_hooks({"preToolCall": [entry]}, Where("t.yaml"), base_dir=tmp_path)
    engine = HookEngine(config, session_id="s", project_dir=str(tmp_path))

    async def main() -> list[str | None]:
        try:
            outcomes = await asyncio.gather(*(
                engine.run("preToolCall", {"tool": "shell", "arguments": {"command": str(n)}})
                for n in range(8)
            ))  # fmt: skip
        finally:
            await engine.aclose()
        return [outcome.reason for outcome in outcomes]

    assert asyncio.run(main()) == [str(n) for n in range(8)]
