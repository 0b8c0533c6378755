"""The `shell` tool: `bash -c COMMAND` in the project directory, bounded in time and output.

The command runs through `run_process` in a process group of its own, under `reaper.py`:
when it ends, times out or is cancelled, everything it started is killed, background
children and `setsid` daemons too; `ShellLimits` apply to all of it. With the sandbox
on (the agent file's default), all of that runs inside it (`tools/sandbox/bwrap.py`): the
kernel holds every process of the command to the session's boundaries, whatever the
command line says. A non-zero exit or a timeout is an `is_error` result that still
carries the output.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hookgate.errors import ToolError
from hookgate.hooks.process import ProcessResult, SpawnError, resolve_program
from hookgate.messages import ToolSpec
from hookgate.tools.base import BuiltinTool, ToolContext, ToolResult
from hookgate.tools.paths import display_path
from hookgate.tools.sandbox import Boundaries
from hookgate.tools.sandbox.boundaries import RUNS_OUTSIDE, ensure_private, set_aside
from hookgate.tools.settings import ShellLimits

SHELL = "bash"
#: The script the command runs under: it reaps and ends all the command leaves behind.
REAPER = str(Path(__file__).with_name("reaper.py"))


class ShellTool(BuiltinTool):
    """Run a bash command; stdout, then stderr, then the exit status come back as text."""

    spec = ToolSpec(
        name="shell",
        description=(
            "Run a bash command in the project directory and return its output "
            "(stdout, then stderr after a '[stderr]' line) and its exit status. "
            "Background processes are killed when the command ends or times out."
        ),
        parameters={
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The bash command line to run."},
                "timeout": {
                    "type": "number",
                    "description": "Seconds before the command is killed; capped by the agent's limit.",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        },
    )
    needs_consent = True

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        if not command.strip():
            raise ToolError("argument 'command' must not be empty")
        timeout = float(args.get("timeout", ctx.shell_timeout))
        if timeout <= 0:
            raise ToolError(f"argument 'timeout' must be more than 0 seconds, got {timeout:g}")
        timeout = min(timeout, ctx.shell_timeout)
        bounds = Boundaries.of(ctx) if ctx.sandbox.on else None
        absent = [] if bounds is None else bounds.absent_outside()
        try:
            shell = resolve_program(SHELL, ctx.env)  # here: the reaper's error would be vaguer
            argv, env = sandboxed(
                reaped_command([shell, "-c", command], ctx.shell_limits, scoped=bounds is not None),
                ctx,
                bounds,
            )
            from hookgate.hooks.process.aio import run_process  # asyncio's: once a call runs

            result = await run_process(
                argv, env=env, cwd=str(ctx.project_dir), timeout=timeout, output_cap=ctx.output_cap
            )
        except SpawnError as exc:
            raise ToolError(f"cannot run the command: {exc}") from exc
        output = format_output(result, cap=ctx.output_cap, timeout=timeout)
        output += set_aside_notes(absent, ctx)  # every process of the command is gone now
        return ToolResult(output, is_error=result.timed_out or result.returncode != 0)


def set_aside_notes(absent: list[Path], ctx: ToolContext, *, by: str = "this command") -> str:
    """Set aside each of `absent` (`Boundaries.absent_outside`, taken before a confined
    program ran) that is there now; what became of each, a line of its own to append
    to the result, `by` having made it."""
    notes = ""
    for made, aside in set_aside(absent):
        shown = display_path(made, ctx)
        if isinstance(aside, OSError):
            notes += (
                f"\n[hookgate could not set aside {shown}, which {by} made "
                f"({aside.strerror}): {RUNS_OUTSIDE}; review it before they do]"
            )
        else:
            notes += (
                f"\n[hookgate set aside {shown}, which {by} made: {RUNS_OUTSIDE}; "
                f"it is now {display_path(aside, ctx)}]"
            )
    return notes


def reaped_command(argv: list[str], limits: ShellLimits, *, scoped: bool = False) -> list[str]:
    """`argv` run under the reaper, with `limits`; `-I -S`: no site, no user paths.
    `scoped`: in the sandbox, in a Landlock domain of its own (`reaper.py`)."""
    values = (limits.processes, limits.cpu_seconds, limits.file_size)
    shown = ["-" if value is None else str(value) for value in values]
    return [
        sys.executable,
        "-I",
        "-S",
        REAPER,
        *(["--scoped"] if scoped else []),
        *shown,
        "--",
        *argv,
    ]


def sandboxed(
    argv: list[str], ctx: ToolContext, bounds: Boundaries | None
) -> tuple[list[str], Mapping[str, str]]:
    """`argv` and its environment as the session's sandbox runs them within `bounds`
    (`Boundaries.of(ctx)`; None: the sandbox is off, and they are as they are).

    Raises `ToolError` where the sandbox cannot be set up: the command never runs loose.
    """
    if bounds is None:
        return argv, ctx.env
    from hookgate.tools.sandbox.bwrap import SandboxUnavailable, confine

    env = dict(ctx.env)
    try:
        if ctx.private_tmp is not None:
            ensure_private(ctx.private_tmp)
            env["TMPDIR"] = str(ctx.private_tmp)
        return confine(argv, bounds), env
    except (SandboxUnavailable, OSError) as exc:
        raise ToolError(f"[not run: the sandbox cannot be set up: {exc}]") from exc


def format_output(result: ProcessResult, *, cap: int, timeout: float) -> str:
    """The text the model reads: stdout, `[stderr]` and stderr, then status lines.

    stdout and stderr share `cap` bytes; when both are long each keeps at least half.
    """
    stdout, stderr = _share(result.stdout, result.stderr, cap)
    truncated = (
        result.stdout_truncated
        or result.stderr_truncated
        or len(stdout) + len(stderr) < len(result.stdout) + len(result.stderr)
    )
    parts = [stdout.decode("utf-8", "replace")] if stdout else []
    if stderr:
        parts.append("[stderr]\n" + stderr.decode("utf-8", "replace"))
    text = "\n".join(part.removesuffix("\n") for part in parts)
    notes = []
    if truncated:
        notes.append(f"[output truncated at {cap} bytes]")
    if result.timed_out:
        notes.append(f"[timed out after {timeout:g}s; process group killed]")
    elif result.signal is not None:
        notes.append(f"[killed by signal {_signal_name(result.signal)}]")
    elif result.returncode != 0:
        notes.append(f"[exit {result.returncode}]")
    if not text and not notes:
        return "[no output]"
    return "\n".join(part for part in (text, *notes) if part)


def _share(stdout: bytes, stderr: bytes, cap: int) -> tuple[bytes, bytes]:
    err_keep = min(len(stderr), max(cap - len(stdout), cap // 2))
    out_keep = min(len(stdout), cap - err_keep)
    return stdout[:out_keep], stderr[:err_keep]


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)
