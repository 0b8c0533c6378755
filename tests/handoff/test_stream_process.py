"""`stream_process`, the streaming sibling of `run_process` that asked agents run through.

The output arrives while the process still runs; every guarantee of `run_process`
holds: the cap, the timeout, TERM then KILL of the whole group, the cancellation.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hookgate.hooks.process import ProcessResult, stream_process

pytestmark = pytest.mark.anyio

#: Slack on every duration bound, for a loaded two-core machine.
SLACK = 1.5


class Chunks:
    def __init__(self) -> None:
        self.received: list[tuple[float, bytes]] = []
        self.arrived = asyncio.Event()

    def __call__(self, chunk: bytes) -> None:
        self.received.append((time.monotonic(), chunk))
        self.arrived.set()

    @property
    def data(self) -> bytes:
        return b"".join(chunk for _, chunk in self.received)


async def stream_sh(script: str, sink: Chunks, **options: float) -> ProcessResult:
    return await stream_process(
        ["/bin/sh", "-c", script], on_stdout=sink, env=dict(os.environ),
        timeout=options.get("timeout", 10.0), kill_grace=options.get("kill_grace", 0.2),
        output_cap=int(options.get("output_cap", 1024 * 1024)),
    )  # fmt: skip


async def test_output_arrives_while_the_process_runs() -> None:
    sink = Chunks()
    started = time.monotonic()

    result = await stream_sh("echo first; sleep 0.5; echo second", sink)

    ended = time.monotonic()
    assert sink.data == b"first\nsecond\n"
    assert sink.received[0][0] - started < ended - started - 0.3  # before the sleep ended
    assert (result.returncode, result.stdout, result.timed_out) == (0, b"", False)


async def test_stdin_is_written_and_stderr_kept() -> None:
    sink = Chunks()
    result = await stream_process(
        ["/bin/sh", "-c", "cat; echo err >&2"], on_stdout=sink, stdin=b"the prompt",
        env=dict(os.environ), timeout=10.0,
    )  # fmt: skip

    assert (sink.data, result.stderr) == (b"the prompt", b"err\n")


async def test_a_flood_is_capped_and_flagged() -> None:
    sink = Chunks()

    result = await stream_sh("head -c 1000000 /dev/zero", sink, output_cap=1000)

    assert len(sink.data) == 1000
    assert result.stdout_truncated


async def test_a_process_deaf_to_sigterm_is_killed_after_the_grace(
    tmp_path: Path, group_gone: Callable[[int], None]
) -> None:
    pid_file, sink = tmp_path / "pid", Chunks()
    script = f'trap "" TERM; echo $$ > "{pid_file}"; sleep 30 & wait'
    started = time.monotonic()

    result = await stream_sh(script, sink, timeout=0.3, kill_grace=0.3)

    assert result.timed_out
    assert time.monotonic() - started < 0.6 + SLACK
    group_gone(int(pid_file.read_text()))


async def test_cancelling_the_caller_stops_the_group(
    tmp_path: Path, group_gone: Callable[[int], None]
) -> None:
    pid_file, sink = tmp_path / "pid", Chunks()
    task = asyncio.ensure_future(stream_sh(f'echo $$ > "{pid_file}"; echo go; sleep 30', sink))
    await asyncio.wait_for(sink.arrived.wait(), 10.0)

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    group_gone(int(pid_file.read_text()))
