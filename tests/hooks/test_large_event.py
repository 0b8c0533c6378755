"""A large event is encoded once, written to the hook as it is made, never held twice.

The memory is counted (tracemalloc's peak, in a process of its own, against the size of
the tool's result), never timed; the hook's stdin is kept and compared with what the
format writes whole.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import ProcessResult, run_process_sync
from hookgate.hooks.events import EVENTS
from hookgate.hooks.formats import FORMATS
from hookgate.hooks.formats.base import BIG
from hookgate.hooks.formats.pieces import PIECE, json_pieces
from hookgate.hooks.process import run_process

#: Characters of the tool's result: a 50 MB output of 80-character lines.
RESULT_SIZE = 50_000_000

#: A persistent hook that keeps the last event line it read in `argv[1]` and allows.
PERSISTENT_CHILD = textwrap.dedent(
    """
    import sys
    for line in sys.stdin.buffer:
        with open(sys.argv[1], "wb") as kept:
            kept.write(line)
        number = int(line[len(b'{"id":') : line.index(b",")])
        sys.stdout.write('{"id": %d, "reply": null}\\n' % number)
        sys.stdout.flush()
    """
)

#: Runs one postToolCall through the engine with a 50 MB result, the hook keeping its
#: stdin (a process hook) or its event line (a persistent one) in `argv[5]`; prints the
#: peak of Python's memory during the call, less what was held before it. A first,
#: small event starts a persistent hook's process before the count. Under `await run`
#: the call is awaited inside a coroutine, as in an agent's loop
#: (`asyncio.run(engine.run(...))` would hand the Outcome back to asyncio, whose
#: clean-up on Python 3.11 takes the whole repr of its task's result).
MEASURE = textwrap.dedent(
    """
    import asyncio, sys, tracemalloc
    from pathlib import Path
    from hookgate.hooks import HookEngine, parse_hooks
    from hookgate.hooks.files.yamlfile import Where

    driver, kind, fmt, kept = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5]
    size = int(sys.argv[4])
    if kind == "process":
        hook = {"command": f"cat > {kept}", "format": fmt}
    else:  # the child's script is argv[6]
        child = [sys.executable, "-c", sys.argv[6], kept]
        hook = {"args": child, "persistent": True, "format": fmt}
    config = parse_hooks({"postToolCall": [hook]}, Where("t.yaml"), base_dir=Path.cwd())
    engine = HookEngine(config, session_id="large")
    result = {"content": ("x" * 78 + "\\"\\n") * (size // 80), "is_error": False}
    payload = {"tool": "shell", "arguments": {"command": "cat log"}, "result": result}
    small = {"tool": "shell", "arguments": {}, "result": {"content": "", "is_error": False}}

    def check(outcome):
        assert outcome.hooks_run == 1 and not outcome.errors, outcome.errors

    async def run():
        check(await engine.run("postToolCall", small))
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        check(await engine.run("postToolCall", payload))
        peak = tracemalloc.get_traced_memory()[1] - before
        await engine.aclose()
        return peak

    if driver == "sync":
        check(engine.run_sync("postToolCall", small))
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        check(engine.run_sync("postToolCall", payload))
        peak = tracemalloc.get_traced_memory()[1] - before
        engine.close()
    else:
        peak = asyncio.run(run())
    print(peak)
    """
)


@pytest.mark.parametrize("fmt", ["native", "claude"])
@pytest.mark.parametrize("kind", ["process", "persistent"])
@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_50_mb_result_adds_at_most_one_copy_of_itself(
    tmp_path: Path, driver: str, kind: str, fmt: str
) -> None:
    """A process hook reads the event on stdin; a persistent one, as its line
    `{"id": N, "event": EVENT}`: either is written as it is made."""
    kept = tmp_path / "stdin"
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, driver, kind, fmt, str(RESULT_SIZE), str(kept),
         PERSISTENT_CHILD],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    added = int(done.stdout)
    assert added <= RESULT_SIZE, f"{added / RESULT_SIZE:.2f} copies of the result"
    event = json.loads(kept.read_bytes())
    if kind == "persistent":  # the second line: the first was the small event's
        assert event["id"] == 2
        event = event["event"]
    written = event["result"]["content"] if fmt == "native" else event["tool_response"]["stdout"]
    assert written == ("x" * 78 + '"\n') * (RESULT_SIZE // 80)


#: Every kind of character JSON escapes or keeps, and a lone surrogate (bytes kept by
#: surrogateescape), which the formats write as `\udcXX`.
TRICKY = 'plain "quoted" back\\slash \n\t\x00\x1f é 漢字 😀 \udc80 '


@pytest.mark.parametrize(
    "value",
    [
        {"result": {"content": TRICKY * (BIG // len(TRICKY) + 1), "is_error": False}},
        {"big": [1, 2.5, None, True, TRICKY * (BIG // len(TRICKY) + 1)], "small": "x"},
        {"tuple": ("a", "b" * BIG), 7: "int key", None: "none key", "n": {"k": []}},
        {"small": TRICKY, "nested": {"list": [{}, []]}},
    ],
    ids=["nested", "list", "keys", "small"],
)
@pytest.mark.parametrize("fmt", ["native", "claude"])
def test_the_pieces_are_the_bytes_the_format_writes_whole(fmt: str, value: Any) -> None:
    if fmt == "claude":
        value = {"tool": "shell", "arguments": {}, "result": {"content": str(value)}}
    envelope = {"event": "postToolCall", "session_id": "s", "cwd": "/", **value}
    spec = EVENTS["postToolCall"]
    pieces = list(FORMATS[fmt].encode_pieces(spec, envelope))  # type: ignore[attr-defined]
    assert b"".join(pieces) == FORMATS[fmt].encode(spec, envelope)
    # A slice of PIECE characters, escaped (6 at most each) after less than PIECE held.
    assert max(len(piece) for piece in pieces) <= 8 * PIECE


def test_the_pieces_of_a_large_text_are_made_as_they_are_asked_for() -> None:
    pieces = json_pieces({"text": "x" * (10 * BIG)})
    first = next(pieces)
    assert len(first) <= PIECE + 64
    assert sum(len(piece) for piece in pieces) + len(first) == 10 * BIG + len('{"text":""}')


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_pieces_are_made_as_the_process_reads_them(driver: str) -> None:
    """A process that reads its whole input gets every piece; one that reads none
    (`true`) gets what its pipe held, and the rest is never made."""
    made = [0]

    def pieces(count: int) -> Iterator[bytes]:
        for _ in range(count):
            made[0] += 1
            yield b"x" * PIECE

    def run(argv: list[str], count: int) -> ProcessResult:
        made[0] = 0
        options: dict[str, Any] = {"stdin": lambda: pieces(count), "env": dict(os.environ)}
        if driver == "sync":
            return run_process_sync(argv, timeout=30, **options)
        return asyncio.run(run_process(argv, timeout=30, **options))

    counted = run(["/bin/sh", "-c", "wc -c"], 64)
    assert (int(counted.stdout), made[0]) == (64 * PIECE, 64)
    assert run(["/bin/true"], 1000).returncode == 0
    assert made[0] < 1000, made
