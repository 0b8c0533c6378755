"""Running an asked agent: a separate `hookgate` process with its own agent file.

The child reads the prompt on stdin and writes the hand-off stream (`protocol`) on
stdout; it runs through `stream_process`, so it has a process group of its own, is
stopped at its timeout or when the asker's turn is cancelled, and is always reaped.
Every way it can fail (it cannot start, crashes, exits non-zero, hangs, writes
garbage) comes back as a `ChildAnswer` whose `error` says so, never as an exception.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hookgate.config.agentfile import AgentRef
from hookgate.handoff.protocol import EXIT_ANSWERED, EXIT_BLOCKED, StreamReader
from hookgate.hooks.process import ProcessResult, SpawnError, stream_process

#: Seconds between SIGTERM and SIGKILL for an asked agent. It is a hookgate: on
#: SIGTERM it cancels its turn, stops its own tools' and hooks' groups (half a second
#: each) and runs its postGeneration hooks; a hook's grace would cut that short.
CHILD_STOP_GRACE = 5.0
#: Bytes of hand-off stream read from a child; a longer stream is a failure.
STREAM_CAP = 8 * 1024 * 1024
#: Characters of the child's stderr quoted when it failed.
STDERR_TAIL = 400
#: The variables that carry the depth to the asked agent and to whatever it starts
#: (a skill of it running `hookgate --ask` keeps counting from there).
DEPTH_ENV = "HOOKGATE_ASKED_DEPTH"
DEPTH_LIMIT_ENV = "HOOKGATE_ASK_DEPTH_LIMIT"


@dataclass(frozen=True)
class ChildAnswer:
    """What came back from an asked agent: its answer (perhaps partial) and the error."""

    text: str
    error: str | None = None
    session: str | None = None
    """The asked agent's saved session, when it answered: resuming it sends it on."""
    blocked: bool = False
    """Whether a hook of the asked agent stopped the question before its model read it:
    the question may hold what that hook exists to stop."""


def child_argv(
    ref: AgentRef,
    *,
    depth: int,
    depth_limit: int,
    trusted_digest: str | None = None,
    resume: str | None = None,
    deny: Sequence[str] = (),
) -> list[str]:
    """The command line of an asked agent (the `--answer-asked` mode of the CLI).

    `-P`: the project directory (its cwd) is not put on `sys.path`, so a module there
    (`argparse.py`, say) can never stand in for one of hookgate's own imports. `deny`:
    the asker's deny rules, which the asked agent runs under besides its own.
    """
    argv = [
        sys.executable, "-P", "-m", "hookgate.cli", "--agent", str(ref.file), "--answer-asked",
        "--asked-depth", str(depth), "--ask-depth-limit", str(depth_limit),
        "--asked-as", ref.name,
    ]  # fmt: skip
    if trusted_digest is not None:
        argv += ["--trusted-digest", trusted_digest]
    if resume is not None:
        argv.append(f"--resume={resume}")  # one word: an id can never read as an option
    argv += [f"--caller-deny={rule}" for rule in deny]  # one word each, like `--resume`
    return argv


async def run_child(
    ref: AgentRef,
    prompt: str,
    *,
    depth: int,
    depth_limit: int,
    cwd: Path,
    env: Mapping[str, str],
    on_text: Callable[[str], None],
    on_notice: Callable[[str], None],
    trusted_digest: str | None = None,
    resume: str | None = None,
    deny: Sequence[str] = (),
) -> ChildAnswer:
    """Ask `ref` the joined `prompt`; it runs at `depth` (1 for the top agent's child).

    Its text and notices reach `on_text` and `on_notice` as they are written.
    Cancellation stops the child's process group and propagates. `resume`: the
    session of an earlier answer of `ref`, which goes on with `prompt` as its next
    question.
    """
    argv = child_argv(
        ref, depth=depth, depth_limit=depth_limit, trusted_digest=trusted_digest, resume=resume,
        deny=deny,
    )  # fmt: skip
    return await ask_process(
        argv,
        prompt,
        cwd=cwd,
        env={**env, DEPTH_ENV: str(depth), DEPTH_LIMIT_ENV: str(depth_limit)},
        timeout=ref.timeout,
        on_text=on_text,
        on_notice=on_notice,
    )


async def ask_process(
    argv: Sequence[str],
    prompt: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    on_text: Callable[[str], None],
    on_notice: Callable[[str], None],
    kill_grace: float = CHILD_STOP_GRACE,
) -> ChildAnswer:
    """Run `argv` as an asked agent: `prompt` on its stdin, the hand-off stream read back."""
    reader = StreamReader(_quiet(on_text), _quiet(on_notice))
    try:
        result = await stream_process(
            argv,
            on_stdout=reader.feed,
            stdin=prompt.encode("utf-8", "backslashreplace"),
            env=env,
            cwd=str(cwd),
            timeout=timeout,
            output_cap=STREAM_CAP,
            kill_grace=kill_grace,
        )
    except SpawnError as exc:
        return ChildAnswer("", f"the asked agent could not start: {exc}")
    reader.close()
    return _judge(reader, result, timeout)


def _judge(reader: StreamReader, result: ProcessResult, timeout: float) -> ChildAnswer:
    """The answer and the error, from what the stream said and how the process ended."""
    final = reader.final
    partial = "".join(reader.streamed)
    if result.timed_out:
        return ChildAnswer(partial, f"no answer within {timeout:g}s; the asked agent was stopped")
    if result.stdout_truncated:
        return ChildAnswer(partial, f"the asked agent wrote more than {STREAM_CAP} bytes")
    if reader.error is not None:
        return ChildAnswer(partial, reader.error + _stderr_tail(result))
    if result.signal is not None:
        return ChildAnswer(partial, f"the asked agent was killed by {_signal_name(result.signal)}")
    if final is None:
        status = f"exited with status {result.returncode}" if result.returncode else "exited"
        return ChildAnswer(
            partial, f"the asked agent {status} without an answer{_stderr_tail(result)}"
        )
    expected = {"answer": EXIT_ANSWERED, "blocked": EXIT_BLOCKED}.get(final.kind)
    if final.kind == "failed":
        return ChildAnswer(partial, f"the asked agent's turn failed: {final.text}")
    if result.returncode != expected:
        return ChildAnswer(
            final.text,
            f"the asked agent exited with status {result.returncode}{_stderr_tail(result)}",
        )
    if final.kind == "blocked":
        why = f"a hook of the asked agent stopped the question: {final.reason}"
        return ChildAnswer(final.text, why, blocked=True)
    return ChildAnswer(final.text, session=final.session)


def _stderr_tail(result: ProcessResult) -> str:
    text = result.stderr.decode("utf-8", "replace").strip()
    if not text:
        return ""
    return ": " + (text if len(text) <= STDERR_TAIL else "…" + text[-STDERR_TAIL:])


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _quiet(show: Callable[[str], None]) -> Callable[[str], None]:
    """`show`, minus the errors of a terminal that went away: the hand-off goes on."""

    def call(text: str) -> None:
        with contextlib.suppress(OSError):
            show(text)

    return call
