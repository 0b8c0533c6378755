"""Load: many sessions at once, in-process and over ACP, each tool call passing six hooks.

Each session carries a marker of its own in its questions, files and tool calls. The
cases measure throughput, latency percentiles, peak RSS and open fds, write them to
`OUT/load.json`, and assert that no artifact of one session holds another's marker,
and that batch after batch leaves no fd, no process and no memory behind.

In-process, each session plays a generated script (`model: scripted:`), so what is
measured is the runtime and its hooks; over ACP, every session's model is the loopback
chat server (`tests/support/chat_server.py`), real HTTP, one reply queue per session.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import os
import re
import secrets
import statistics
import threading
import time
import weakref
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks.process.guard import GUARDIAN_SCRIPT, guard_token
from hookgate.messages import Message, ModelReply, ToolCall, ToolSpec
from hookgate.models import ModelClient, TextSink, make_model
from hookgate.runtime.agent import AgentSession, open_agent
from hookgate.runtime.consent import AlwaysDeny
from hookgate.runtime.turn import Answered, run_turn
from hookgate.security.trust.record import trust_agent_file
from hookgate.security.trust.store import TrustStore
from hookgate.store.session import SessionStore
from hookgate.tools import ToolResult
from reliability.load_hook import LOGS_ENV
from reliability.profile import OUT, scale
from runtime.project import HOOKGATE, MODEL_TIMEOUT, RecordingView
from support.acp_client import AcpPeer, RecordingClient, acp_peer
from support.chat_server import ChatServer, RecordedRequest, ServedReply, ServedToolCall

#: Sessions at once in-process; turns each session runs per batch; tool calls per turn,
#: one per model reply, each passing three preToolCall and three postToolCall hooks.
SESSIONS, TURNS, CALLS = scale(8, 64), scale(3, 10), scale(3, 5)
#: Sessions at once in one `hookgate acp` process.
ACP_SESSIONS = scale(4, 16)
#: Consecutive batches of the workload. Growth is measured from the 2nd batch to the
#: last: the 1st pays for imports, caches and the allocator's first arenas.
BATCHES = 3
#: Megabytes of RSS a process may gain from the end of the 2nd batch to the end of the
#: last. In-process, each batch opens and closes fresh sessions: what stays is a leak.
#: Over ACP the sessions stay open and their histories grow by design (a few hundred
#: short messages): tens of kilobytes, well inside the bound.
RSS_GROWTH_MB = 8.0
#: How many times the CPU time of the 2nd batch the last may take. In-process each batch
#: does the same work; over ACP the histories, and so the requests, grow (~1.2x from the
#: 2nd batch to the 3rd in the full profile). The openai SDK's own check of every message,
#: on every request, made it ~1.7x, and the turns of the 3rd batch 4x slower than the 1st.
CPU_GROWTH = 1.5
#: Megabytes of RSS a process serving the load may reach (its imports take ~60 of them);
#: in-process, megabytes the load may add to the test process.
PEAK_RSS_MB = 256.0
#: Open fds one working session may add: a hook's or the shell's three pipes and its
#: pidfd, a file tool's file, a log or session file being appended to, with room over.
FDS_PER_SESSION = 8
#: Seconds between two counts of a process's fds during a batch.
FD_SAMPLE_S = 0.01
#: Seconds a finished batch's processes may take to be reaped.
PROCESSES_GONE_S = 2.0
#: The slowest turn allowed (p99), in seconds: far above what a turn takes even on a
#: loaded two-core runner; a hook or a session stuck behind another breaks it.
TURN_P99_LIMIT_S = scale(10, 30)
#: Messages in the history of the long session, and the longest the event loop may be
#: held while its request is sent, in CPU seconds (`longest_stall`): encoding its ~600 KB
#: of JSON takes tens of milliseconds; the openai SDK's walk of every message against
#: its types took 1.4-2.4 s.
LONG_HISTORY, STALL_LIMIT_S = 5000, 0.5
#: Seconds between two ticks of the task that watches the event loop.
TICK_S = 0.001
#: Each hook's log, by kind, and the field of its lines that names the session.
LOG_SESSION_FIELDS = {
    "python.jsonl": "session_id",
    "native.jsonl": "session_id",
    "mecatl.jsonl": "SessionID",
    "gen.jsonl": "session_id",
}
MARKER = re.compile(r"mark-b\d+s\d{3}-[0-9a-f]{6}")
LOAD_JSON = "load.json"
TESTS_DIR = Path(__file__).resolve().parent.parent


# The workload: what each session asks, which tools its model calls, what it answers.


def new_marker(batch: int, index: int) -> str:
    return f"mark-b{batch}s{index:03d}-{secrets.token_hex(3)}"


def question(batch: int, turn: int, marker: str) -> str:
    return f"Batch {batch}, turn {turn}, for {marker}: look at the notes."


def answer(turn: int, marker: str) -> str:
    return f"Turn {turn} for {marker}: done."


def notes_name(marker: str) -> str:
    return f"notes-{marker}.txt"


def tool_calls_of(turn: int, marker: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of one turn; the first turn starts with one (cheap) shell command."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for index in range(CALLS):
        if turn == 0 and index == 0:
            calls.append(("shell", {"command": f"echo {marker}"}))
        elif index % 2:
            calls.append(("list_files", {"pattern": "*.txt"}))
        else:
            calls.append(("read_file", {"path": notes_name(marker)}))
    return calls


def scripted_replies(marker: str) -> list[dict[str, Any]]:
    """A session's script: every reply expects the marker in what the model last read."""
    replies: list[dict[str, Any]] = []
    for turn in range(TURNS):
        for name, arguments in tool_calls_of(turn, marker):
            replies.append(
                {"expect": marker, "tool_calls": [{"name": name, "arguments": arguments}]}
            )
        replies.append({"expect": marker, "text": answer(turn, marker)})
    return replies


def served_replies(marker: str) -> list[ServedReply]:
    """The same turns as the loopback server streams them."""
    replies: list[ServedReply] = []
    for turn in range(TURNS):
        for name, arguments in tool_calls_of(turn, marker):
            replies.append(ServedReply(tool_calls=[ServedToolCall(name, arguments)]))
        replies.append(ServedReply(text=answer(turn, marker)))
    return replies


def load_hooks(logs: Path) -> dict[str, list[dict[str, Any]]]:
    """A Python, a native and a mecatl hook on both tool events; recorders around turns.

    Each logs its whole input to a file named after the session it ran for.
    """

    def log_to(kind: str) -> str:
        return f'{{ cat; echo; }} >> "{logs}/$HOOKGATE_SESSION_ID.{kind}"'

    on_tools = [
        {"name": "python", "python": "reliability.load_hook:record"},
        {"name": "native", "command": log_to("native.jsonl")},
        {"name": "mecatl", "format": "mecatl", "command": log_to("mecatl.jsonl")},
    ]
    recorder = {"name": "recorder", "command": log_to("gen.jsonl")}
    return {
        "preGeneration": [recorder],
        "preToolCall": on_tools,
        "postToolCall": on_tools,
        "postGeneration": [recorder],
    }


def write_agent(path: Path, model: str | Mapping[str, Any], logs: Path, home: Path) -> Path:
    """The agent file (JSON is YAML): every tool allowed; compaction far off; trusted in `home`."""
    document = {
        "model": model,
        "yolo": True,
        "tools": ["shell", "read_file", "list_files"],
        "context_budget": 10_000_000,
        "hooks": load_hooks(logs),
    }
    path.write_text(json.dumps(document, indent=2))
    trust_agent_file(path, store=TrustStore(home))
    return path


def write_workdir(directory: Path, marker: str) -> Path:
    """A session's own project directory, holding a notes file named after its marker."""
    directory.mkdir(parents=True)
    (directory / notes_name(marker)).write_text(f"The notes of {marker}.\n")
    return directory


# What a process holds: fds, memory, descendants.


def cpu_seconds(pid: int) -> float:
    """User and system CPU time `pid` has used (fields 14 and 15 of /proc/PID/stat)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    utime, stime = text[text.rindex(")") + 2 :].split()[11:13]
    return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def status_mb(pid: int, field_name: str) -> float:
    """A `VmRSS`-like field of /proc/PID/status, in megabytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field_name}:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field_name} in /proc/{pid}/status")


def reset_peak_rss() -> None:
    """Restart this process's VmHWM from its current RSS: the peak is then this case's."""
    Path("/proc/self/clear_refs").write_text("5")


def descendants(ancestor: int) -> dict[int, str]:
    """Every live or zombie descendant of `ancestor`, by pid, with its command line."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # gone while we looked
        # Field 2 (comm) may hold spaces and parentheses: split after its closing one.
        parents[int(stat.parent.name)] = int(text[text.rindex(")") + 2 :].split()[1])
    found: dict[int, str] = {}
    for pid in parents:
        parent = parents.get(pid)
        while parent is not None and parent != ancestor:
            parent = parents.get(parent)
        if parent == ancestor:
            found[pid] = _cmdline(pid)
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "?"


async def processes_left(ancestor: int, expected: Mapping[int, str]) -> dict[int, str]:
    """The descendants of `ancestor` beyond `expected`, once they had time to be reaped.

    The guardian of a process that runs hooks (hooks/process/guard.py) is expected: it
    lives as long as that process.
    """
    deadline = time.monotonic() + PROCESSES_GONE_S
    guardian = str(GUARDIAN_SCRIPT)
    while True:
        left = {
            pid: cmd
            for pid, cmd in descendants(ancestor).items()
            if pid not in expected and guardian not in cmd
        }
        if not left or time.monotonic() > deadline:
            return left
        await asyncio.sleep(0.02)


@asynccontextmanager
async def fd_peak(pid: int) -> AsyncIterator[list[int]]:
    """Count `pid`'s fds every `FD_SAMPLE_S` while the block runs; yields [the peak]."""
    peak = [fd_count(pid)]

    async def sample() -> None:
        while True:
            peak[0] = max(peak[0], fd_count(pid))
            await asyncio.sleep(FD_SAMPLE_S)

    sampler = asyncio.create_task(sample())
    try:
        yield peak
    finally:
        sampler.cancel()
        await asyncio.gather(sampler, return_exceptions=True)


# What a batch measured.


@dataclass
class Latencies:
    """Seconds per turn, and per tool call: from the end of the call before it (or the
    turn's start) to its own end, so model reply, preToolCall, tool and postToolCall."""

    turns: list[float] = field(default_factory=list)
    calls: list[float] = field(default_factory=list)

    def add_turn(self, started: float, calls_done: Sequence[float], ended: float) -> None:
        self.turns.append(ended - started)
        marks = [started, *calls_done]
        self.calls += [end - start for start, end in itertools.pairwise(marks)]


@dataclass
class Batch:
    wall_s: float
    cpu_s: float
    """CPU time of the process serving the sessions, its children's not counted."""
    latencies: Latencies
    fds_peak: int
    fds_after: int
    rss_after_mb: float
    left: dict[int, str]


def percentiles_ms(seconds: Sequence[float]) -> dict[str, float]:
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return {f"p{p}_ms": round(cuts[p - 1] * 1e3, 1) for p in (50, 95, 99)}


def figure_rows(
    scenario: str, sessions: int, batches: Sequence[Batch], *, peak_rss_mb: float,
    fds_before: int, leaks: int,
) -> list[dict[str, Any]]:  # fmt: skip
    """Two rows of `load.json`: one per turn, one per tool call."""
    wall = sum(batch.wall_s for batch in batches)
    turns = [s for batch in batches for s in batch.latencies.turns]
    calls = [s for batch in batches for s in batch.latencies.calls]
    rows = []
    for unit, samples in (("turn", turns), ("tool call", calls)):
        rows.append({
            "scenario": f"{scenario}, per {unit}",
            "sessions": sessions,
            "turns": len(turns),
            "tool_calls": len(calls),
            "throughput_per_s": round(len(samples) / wall, 1),
            **percentiles_ms(samples),
            "peak_rss_mb": round(peak_rss_mb, 1),
            "fds_before": fds_before,
            "fds_after": batches[-1].fds_after,
            "leaks": leaks,
        })  # fmt: skip
    return rows


def record_rows(rows: Sequence[Mapping[str, Any]]) -> None:
    """Put `rows` in `OUT/load.json`, replacing earlier rows of the same scenarios."""
    path = OUT / LOAD_JSON
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = json.loads(path.read_text()) if path.exists() else []
    scenarios = {row["scenario"] for row in rows}
    kept = [row for row in kept if row.get("scenario") not in scenarios]
    scratch = path.with_name(f".{LOAD_JSON}.{os.getpid()}")
    scratch.write_text(json.dumps([*kept, *rows], indent=2) + "\n")
    scratch.replace(path)  # whole or not at all, for whoever reads it


# Leaks: an artifact of one session that holds another's marker.


def foreign_markers(text: str, own: str) -> list[str]:
    return [marker for marker in MARKER.findall(text) if marker != own]


def artifact_leaks(paths: Sequence[Path], markers: Mapping[str, str]) -> list[str]:
    """Each foreign marker found in a session file or hook log, named by file.

    Every file is named after the session it belongs to, and must hold that session's
    own marker (an empty log would prove nothing).
    """
    leaks = []
    for path in paths:
        session_id = path.name.split(".")[0]
        assert session_id in markers, f"{path} belongs to no session of this run"
        text = path.read_text()
        assert markers[session_id] in text, f"{path} lacks its own session's marker"
        leaks += [f"{path.name}: {marker}" for marker in foreign_markers(text, markers[session_id])]
    return leaks


def check_session_files(directory: Path, markers: Mapping[str, str], turns: int) -> None:
    """One file per session, holding every message of its turns: a question, a call and
    its result per tool call, an answer."""
    assert sorted(path.stem for path in directory.glob("*.jsonl")) == sorted(markers)
    for session_id in markers:
        lines = (directory / f"{session_id}.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
        messages = [record for record in records if record.get("type") == "message"]
        assert len(messages) == turns * (2 + 2 * CALLS), session_id


def check_hook_logs(logs: Path, markers: Mapping[str, str], turns: int) -> None:
    """Every session's four logs are there, with one line per hook run, each naming it."""
    expected = sorted(
        f"{session_id}.{kind}" for session_id in markers for kind in LOG_SESSION_FIELDS
    )
    assert sorted(path.name for path in logs.iterdir()) == expected
    for session_id in markers:
        for kind, session_field in LOG_SESSION_FIELDS.items():
            path = logs / f"{session_id}.{kind}"
            lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            runs = 2 * turns * (1 if kind == "gen.jsonl" else CALLS)
            assert len(lines) == runs, (path, len(lines), runs)
            assert {line[session_field] for line in lines} == {session_id}, path


# In-process: open_agent sessions run under one event loop.


class MarkedModel:
    """The session's scripted model, behind a `ModelClient` that reads each request for
    markers other than the session's own."""

    def __init__(self, model: ModelClient, marker: str) -> None:
        self._model = model
        self._marker = marker
        self.foreign: list[str] = []

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_text: TextSink | None = None,
    ) -> ModelReply:
        sent = json.dumps([message.to_json() for message in messages])
        self.foreign += foreign_markers(sent, self._marker)
        return await self._model.complete(messages, tools, on_text)

    async def aclose(self) -> None:
        await self._model.aclose()


class TimedView(RecordingView):
    """A `RecordingView` that also notes when each tool call finished."""

    def __init__(self) -> None:
        super().__init__()
        self.calls_done: list[float] = []

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        super().tool_finished(call, result)
        self.calls_done.append(time.perf_counter())


@dataclass
class SessionRun:
    """What one in-process session leaves for the checks."""

    session_id: str
    foreign: list[str]
    """Markers of other sessions its model was sent."""
    agent: weakref.ref[AgentSession]
    """Dead once the session is closed and collected, unless something kept it."""


async def run_session(
    agent_file: Path, marker: str, batch: int, store: SessionStore, latencies: Latencies
) -> SessionRun:
    """Open a session, run its turns, close it."""
    notices: list[str] = []
    agent = await open_agent(
        agent_file, notify=notices.append, consent=AlwaysDeny(), store=store,
        project_dir=agent_file.parent,
    )  # fmt: skip
    model = MarkedModel(agent.model, marker)
    agent.model = model
    try:
        for turn in range(TURNS):
            view = TimedView()
            started = time.perf_counter()
            outcome = await run_turn(agent, question(batch, turn, marker), view)
            latencies.add_turn(started, view.calls_done, time.perf_counter())
            assert outcome == Answered(answer(turn, marker)), (outcome, view.notices)
            assert (view.notices, len(view.calls_done)) == ([], CALLS)
    finally:
        await agent.aclose()
    assert notices == []
    return SessionRun(agent.session_id, model.foreign, weakref.ref(agent))


def write_batch(root: Path, logs: Path, batch: int, home: Path) -> list[tuple[Path, str]]:
    """`SESSIONS` fresh projects, each with its agent file and script: (file, marker)."""
    agent_files = []
    for index in range(SESSIONS):
        marker = new_marker(batch, index)
        workdir = write_workdir(root / f"b{batch}" / marker, marker)
        (workdir / "script.yaml").write_text(json.dumps(scripted_replies(marker)))
        agent_file = write_agent(workdir / "hookgate.yaml", "scripted:script.yaml", logs, home)
        agent_files.append((agent_file, marker))
    return agent_files


async def in_process_batch(
    root: Path, logs: Path, store: SessionStore, batch: int, markers: dict[str, str]
) -> tuple[Batch, list[str]]:
    """One batch of `SESSIONS` fresh sessions at once; (its figures, foreign markers read).

    Each session must be garbage once closed: a closed session something still holds
    is memory that grows with every session an embedding program opens.
    """
    agent_files = write_batch(root, logs, batch, store.home)
    before, latencies, pid = descendants(os.getpid()), Latencies(), os.getpid()
    async with fd_peak(pid) as peak:
        started, cpu = time.perf_counter(), cpu_seconds(pid)
        async with asyncio.TaskGroup() as group:
            runs = [
                group.create_task(run_session(path, marker, batch, store, latencies))
                for path, marker in agent_files
            ]
        wall, cpu = time.perf_counter() - started, cpu_seconds(pid) - cpu
    left = await processes_left(pid, before)
    finished = [run.result() for run in runs]
    gc.collect()
    kept = [run.session_id for run in finished if run.agent() is not None]
    assert kept == [], f"sessions of batch {batch} outlived their close: {kept}"
    for run, (_, marker) in zip(finished, agent_files, strict=True):
        markers[run.session_id] = marker
    figures = Batch(wall, cpu, latencies, peak[0], fd_count(pid), status_mb(pid, "VmRSS"), left)
    return figures, [marker for run in finished for marker in run.foreign]


@pytest.mark.anyio
@pytest.mark.reliability("load")
@pytest.mark.timeout(scale(120, 300))
async def test_concurrent_in_process_sessions_share_nothing_and_leave_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions at once in one process, sharing a home: none sees another's marker; fds, processes and RSS return to where they were, batch after batch."""
    logs = tmp_path / "logs"
    logs.mkdir()
    monkeypatch.setenv(LOGS_ENV, str(logs))
    store = SessionStore(tmp_path / "home")
    reset_peak_rss()
    # The test process has run other cases (the full profile's fuzzing among them): only
    # what this load adds to its RSS is this case's.
    rss_start = status_mb(os.getpid(), "VmRSS")
    guard_token()  # the guardian's pipe, held for this process's life, is no leak
    fds_before = fd_count(os.getpid())
    markers: dict[str, str] = {}
    batches, model_leaks = [], []
    for number in range(BATCHES):
        figures, foreign = await in_process_batch(tmp_path, logs, store, number, markers)
        batches.append(figures)
        model_leaks += foreign
    peak_rss = status_mb(os.getpid(), "VmHWM")
    assert peak_rss - rss_start < PEAK_RSS_MB

    check_session_files(store.directory, markers, TURNS)
    check_hook_logs(logs, markers, TURNS)
    leaks = model_leaks + artifact_leaks(
        [*store.directory.glob("*.jsonl"), *logs.iterdir()], markers
    )
    record_rows(figure_rows(
        "in-process", SESSIONS, batches, peak_rss_mb=peak_rss, fds_before=fds_before,
        leaks=len(leaks),
    ))  # fmt: skip
    assert leaks == []
    assert len(markers) == BATCHES * SESSIONS
    assert_steady(batches, SESSIONS, fds_before)
    for number, batch in enumerate(batches, start=1):
        assert batch.fds_after == fds_before, f"batch {number} left {batch.fds_after} fds"


def assert_steady(batches: Sequence[Batch], sessions: int, fds_idle: int) -> None:
    """No batch left a process; fds stayed in proportion to the sessions at work; the
    sessions ran at once; RSS and CPU time per batch stopped growing after the 2nd."""
    for number, batch in enumerate(batches, start=1):
        assert batch.left == {}, f"batch {number} left processes behind: {batch.left}"
        assert batch.fds_peak <= fds_idle + FDS_PER_SESSION * sessions, (number, batch.fds_peak)
        assert percentiles_ms(batch.latencies.turns)["p99_ms"] < TURN_P99_LIMIT_S * 1e3
        # Sessions served one after another would sum to about the wall time.
        assert sum(batch.latencies.turns) > batch.wall_s * sessions / 2, (number, batch.wall_s)
    rss = [batch.rss_after_mb for batch in batches]
    assert rss[-1] - rss[1] < RSS_GROWTH_MB, f"RSS after each batch (MB): {rss}"
    cpu = [batch.cpu_s for batch in batches]
    assert cpu[-1] < CPU_GROWTH * cpu[1], f"CPU seconds of each batch: {cpu}"


# Over ACP: one `hookgate acp` process, its sessions prompted at once by one editor.


class RoutedChatServer(ChatServer):
    """The loopback server with one reply queue per session, picked by the marker the
    request holds. A request holding another marker, or none, is a leak: it is noted
    and answered with an error, so its turn fails too."""

    def __init__(self) -> None:
        super().__init__()
        self._routes: dict[str, deque[ServedReply]] = defaultdict(deque)
        self._guard = threading.Lock()
        self.leaks: list[str] = []

    def route(self, marker: str, replies: Sequence[ServedReply]) -> None:
        with self._guard:
            self._routes[marker].extend(replies)

    def take(self, request: RecordedRequest) -> ServedReply | None:
        found = sorted(set(MARKER.findall(json.dumps(request.body))))
        messages = request.body.get("messages") or [{}]
        last: Mapping[str, Any] = next(
            (m for m in reversed(messages) if m.get("role") in ("user", "tool")), {}
        )
        with self._guard:
            if len(found) != 1 or found[0] not in str(last.get("content")):
                self.leaks.append(f"a model request held {found}; its last message: {last}")
                return None
            queue = self._routes[found[0]]
            return queue.popleft() if queue else None


class TimedClient(RecordingClient):
    """The editor: a `RecordingClient` that also notes when each tool call completed."""

    def __init__(self) -> None:
        super().__init__()
        self.calls_done: dict[str, list[float]] = defaultdict(list)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        if update.session_update == "tool_call_update" and update.status == "completed":
            self.calls_done[session_id].append(time.perf_counter())


async def prompt_turns(
    peer: AcpPeer, session_id: str, marker: str, batch: int, latencies: Latencies
) -> None:
    """Prompt one session's turns of a batch, one after the other, as an editor does."""
    client = peer.client
    assert isinstance(client, TimedClient)
    for turn in range(TURNS):
        done_before = len(client.calls_done[session_id])
        started = time.perf_counter()
        response = await peer.prompt(session_id, question(batch, turn, marker))
        latencies.add_turn(
            started, client.calls_done[session_id][done_before:], time.perf_counter()
        )
        assert response.stop_reason == "end_turn"
        assert response.field_meta == {"hookgate": {"outcome": "answered"}}
        assert len(client.calls_done[session_id]) - done_before == CALLS


async def acp_batch(
    peer: AcpPeer, pid: int, server: RoutedChatServer, markers: Mapping[str, str], batch: int
) -> Batch:
    """`TURNS` more turns in every session of the `hookgate acp` process `pid`, at once."""
    for marker in markers.values():
        server.route(marker, served_replies(marker))
    latencies = Latencies()
    async with fd_peak(pid) as peak:
        started, cpu = time.perf_counter(), cpu_seconds(pid)
        async with asyncio.TaskGroup() as group:
            for session_id, marker in markers.items():
                group.create_task(prompt_turns(peer, session_id, marker, batch, latencies))
        wall, cpu = time.perf_counter() - started, cpu_seconds(pid) - cpu
    left = await processes_left(pid, {})
    return Batch(wall, cpu, latencies, peak[0], fd_count(pid), status_mb(pid, "VmRSS"), left)


def acp_env(home: Path, logs: Path) -> dict[str, str]:
    """`hookgate acp`'s environment: its home, the logs, the Python hook importable."""
    path = os.pathsep.join(filter(None, [str(TESTS_DIR), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "HOOKGATE_HOME": str(home), "NO_COLOR": "1", LOGS_ENV: str(logs)}
    env.update(PYTHONPATH=path)
    env.pop("OPENAI_BASE_URL", None)
    return env


def started_child(before: Mapping[int, str]) -> int:
    """The pid of the one `hookgate acp` this process started since `before`."""
    (pid,) = [
        pid for pid, cmd in descendants(os.getpid()).items()
        if pid not in before and cmd.endswith(f"{HOOKGATE} acp")
    ]  # fmt: skip
    return pid


async def open_acp_sessions(peer: AcpPeer, root: Path) -> dict[str, str]:
    """`ACP_SESSIONS` sessions, each in a directory of its own; their markers by id."""
    markers = {}
    for index in range(ACP_SESSIONS):
        marker = new_marker(0, index)
        workdir = write_workdir(root / marker, marker)
        response = await peer.conn.new_session(cwd=str(workdir), mcp_servers=[])
        markers[response.session_id] = marker
    return markers


def editor_leaks(client: RecordingClient, markers: Mapping[str, str]) -> list[str]:
    """Foreign markers in what the editor received for each session."""
    leaks = []
    for session_id, marker in markers.items():
        updates = [update.model_dump_json() for update in client.updates[session_id]]
        assert any(marker in update for update in updates), session_id
        leaks += [
            f"updates of {session_id}: {m}" for m in foreign_markers("".join(updates), marker)
        ]
    return leaks


@pytest.mark.anyio
@pytest.mark.reliability("load")
@pytest.mark.timeout(scale(120, 300))
async def test_concurrent_acp_sessions_share_nothing_and_leave_nothing(tmp_path: Path) -> None:
    """Sessions of one `hookgate acp` prompted at once: none sees another's marker; fds, processes and RSS stay flat, batch after batch."""
    logs, home, stderr = tmp_path / "logs", tmp_path / "home", tmp_path / "acp.stderr"
    logs.mkdir()
    client = TimedClient()
    before = descendants(os.getpid())
    server = RoutedChatServer()
    with server:
        model = {"name": "load", "base_url": server.url, "timeout": MODEL_TIMEOUT}
        write_agent(tmp_path / "hookgate.yaml", model, logs, home)
        env = acp_env(home, logs)
        async with acp_peer(HOOKGATE, tmp_path, env, stderr, client) as peer:
            pid = started_child(before)
            markers = await open_acp_sessions(peer, tmp_path)
            fds_idle = fd_count(pid)
            batches = [await acp_batch(peer, pid, server, markers, b) for b in range(BATCHES)]
            peak_rss = status_mb(pid, "VmHWM")
    assert peak_rss < PEAK_RSS_MB
    left = await processes_left(os.getpid(), before)

    check_session_files(home / "sessions", markers, BATCHES * TURNS)
    check_hook_logs(logs, markers, BATCHES * TURNS)
    leaks = server.leaks + editor_leaks(client, markers)
    leaks += artifact_leaks([*(home / "sessions").glob("*.jsonl"), *logs.iterdir()], markers)
    record_rows(figure_rows(
        "acp", ACP_SESSIONS, batches, peak_rss_mb=peak_rss, fds_before=fds_idle,
        leaks=len(leaks),
    ))  # fmt: skip
    assert leaks == []
    assert left == {}, f"processes outlived hookgate acp: {left}"
    assert stderr.read_text() == ""  # no notice, warning or traceback
    for session_id, marker in markers.items():
        answers = [answer(turn, marker) for _ in range(BATCHES) for turn in range(TURNS)]
        assert client.text(session_id) == "".join(answers)
        assert client.text(session_id, "agent_thought_chunk") == ""  # no notice: no hook failed
    assert_steady(batches, ACP_SESSIONS, fds_idle + ACP_SESSIONS)
    # Each session keeps one connection to its model server, and only one.
    connections = [batch.fds_after - fds_idle for batch in batches]
    assert len(set(connections)) == 1, f"fds held after each batch, over idle: {connections}"
    assert connections[0] <= ACP_SESSIONS


# One long session among many: what its model requests cost everyone else.


def long_history(size: int) -> list[Message]:
    """A system prompt, then turns of a question, a tool call, its result and an answer."""
    messages = [Message("system", "You are a coding assistant.")]
    for turn in range(size // 4):
        call = ToolCall(f"call_{turn}", "read_file", {"path": "notes.txt"})
        messages += [
            Message("user", f"Question {turn}: what do the notes say?"),
            Message("assistant", "", (call,)),
            Message("tool", "The notes. " * 10, tool_call_id=call.id),
            Message("assistant", f"Answer {turn}."),
        ]
    return messages


async def longest_stall(work: Awaitable[object]) -> float:
    """The most processor time the loop's thread spent between two ticks of a task sharing
    the loop with `work`: how long the loop was held, in CPU seconds. Not wall-clock
    time: on a busy machine, a thread waiting for a processor (or for the GIL, which the
    chat server's thread holds meanwhile) holds nothing, and the gap would measure the
    machine, not the code."""
    longest = 0.0

    async def tick() -> None:
        nonlocal longest
        last = time.thread_time()
        while True:
            await asyncio.sleep(TICK_S)
            now = time.thread_time()
            longest, last = max(longest, now - last), now

    ticker = asyncio.create_task(tick())
    try:
        await asyncio.sleep(TICK_S * 10)  # the ticker's first tick, before the work
        await work
    finally:
        ticker.cancel()
        await asyncio.gather(ticker, return_exceptions=True)
    return longest


@pytest.mark.anyio
@pytest.mark.reliability("load")
async def test_a_long_history_does_not_stall_the_sessions_that_share_its_loop(
    chat_server: ChatServer, tmp_path: Path
) -> None:
    """A session with a 5,000-message history asks its model: the event loop its neighbours share is never held half a second of CPU."""
    model = make_model({"name": "load", "base_url": chat_server.url}, tmp_path)
    try:
        chat_server.queue(ServedReply(text="warm"), ServedReply(text="Answer."))
        await model.complete(long_history(4), [])  # connect and import outside the measure
        messages = long_history(LONG_HISTORY)
        stall = await longest_stall(model.complete(messages, []))
    finally:
        await model.aclose()
    (request,) = chat_server.requests[1:]
    assert len(request.body["messages"]) == len(messages)
    assert stall < STALL_LIMIT_S, f"the event loop was held {stall:.2f} s"
