"""The search tools: `list_files` (a glob over paths) and `grep` (a regex over lines).

Both walk a directory of the workspace, skip `.git` and `.venv`, and stop at a fixed
number of results. A file whose real path lies outside what the call may reach (a
symlink out of the project, into `$HOOKGATE_HOME`) is skipped, never read. `grep` is
bounded in time: each line's search, the whole search, and a cancellation stops it.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hookgate.errors import ToolError
from hookgate.messages import ToolSpec
from hookgate.tools.base import BuiltinTool, ToolContext, ToolResult, object_schema
from hookgate.tools.files import BINARY_SNIFF
from hookgate.tools.paths import (
    display_path,
    open_path,
    open_resolved,
    refused,
    within,
    workspace_roots,
)

if TYPE_CHECKING:
    import asyncio

    import regex
else:
    from hookgate.hooks.loop import asyncio  # imported once a turn waits

#: Paths `list_files` returns at most.
MAX_LISTED = 1000
#: Matching lines `grep` returns at most.
MAX_MATCHES = 200
#: Characters of a matching line `grep` shows.
MAX_LINE_CHARS = 300
#: Files larger than this many bytes are not searched by `grep`.
MAX_GREP_FILE = 4 * 1024 * 1024
#: Seconds one line's search may take; past it the pattern is backtracking without
#: bound there (`(a|aa)+$`), and the line is skipped with a note.
MATCH_TIMEOUT = 0.5
#: Seconds a whole `grep` may take; past it the matches found so far come back.
GREP_TIME_LIMIT = 30.0
#: Directory names listing and searching never descend into.
SKIP_DIRS = frozenset({".git", ".venv"})

_DIR = {"type": "string", "default": ".", "description": "Directory to start in."}
_GLOB = {
    "type": "string",
    "default": "**/*",
    "description": "Glob on paths relative to `path`: `**` spans directories, `*` one name, "
    "`{a,b}` alternatives; e.g. `**/*.py`, `src/*.{ts,tsx}`.",
}


class ListFilesTool(BuiltinTool):
    """List the files whose paths match a glob."""

    spec = ToolSpec(
        name="list_files",
        description=f"List files (not directories) matching a glob, sorted, at most {MAX_LISTED}; "
        "`.git` and `.venv` are skipped.",
        parameters=object_schema({"pattern": _GLOB, "path": _DIR}),
    )
    needs_consent = False

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        base = open_path(args["path"], ctx)
        return await asyncio.to_thread(_list, base, args["pattern"], ctx)


class GrepTool(BuiltinTool):
    """Search files for a regular expression."""

    spec = ToolSpec(
        name="grep",
        description="Search text files for a Python regular expression; returns "
        f"`path:line:text` lines, at most {MAX_MATCHES}. `.git` and `.venv` are skipped.",
        parameters=object_schema(
            {
                "pattern": {"type": "string", "description": "Python regular expression."},
                "glob": _GLOB,
                "path": {**_DIR, "description": "File or directory to search (default: project)."},
                "ignore_case": {"type": "boolean", "default": False},
            },
            "pattern",
        ),
    )
    needs_consent = False

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        import regex  # ~15 ms to import: paid by the first grep, not by every start-up

        try:
            # `regex`, not `re`: its searches take a timeout and release the GIL.
            pattern = regex.compile(args["pattern"], regex.IGNORECASE if args["ignore_case"] else 0)
        except regex.error as exc:
            raise ToolError(f"invalid regular expression {args['pattern']!r}: {exc}") from exc
        base = open_path(args["path"], ctx)
        search = _Search(pattern, glob_regex(args["glob"]), ctx)
        try:
            return await asyncio.to_thread(search.run, base)
        except asyncio.CancelledError:
            search.stop.set()  # the thread cannot be killed; it ends at its next line
            raise


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob over `/`-separated relative paths into a regex to `fullmatch`."""
    if pattern.startswith("/"):
        raise ToolError(f"glob {pattern!r} must be relative; give the directory as 'path'")
    parts = pattern.removeprefix("./").split("/")
    regex = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex.append(".*" if last else "(?:[^/]+/)*")
        else:
            regex.append(_glob_segment(part, pattern) + ("" if last else "/"))
    try:
        return re.compile("".join(regex))
    except re.error as exc:
        raise ToolError(f"invalid glob {pattern!r}: {exc}") from exc


def _glob_segment(segment: str, pattern: str) -> str:
    out: list[str] = []
    depth = index = 0
    while index < len(segment):
        char = segment[index]
        end = segment.find("]", index + 2) if char == "[" else -1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif end != -1:
            body = segment[index + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^/" + body[1:] if body.startswith("!") else body) + "]")
            index = end
        elif char == "{":
            out.append("(?:")
            depth += 1
        elif char in ",}" and depth:
            out.append("|" if char == "," else ")")
            depth -= char == "}"
        else:
            out.append(re.escape(char))
        index += 1
    if depth:
        raise ToolError(f"invalid glob {pattern!r}: unbalanced '{{'")
    return "".join(out)


def _walk(base: Path, ctx: ToolContext) -> Iterator[tuple[str, Path, Path]]:
    """Each file under `base` as (its `/`-separated path relative to `base`, its path,
    its real path: the one judged, and the one to open, with `open_resolved`).

    Only files whose real path the call may reach: in the workspace, or under `base`
    (which consent let it reach), never in `$HOOKGATE_HOME`.
    """
    roots = (*workspace_roots(ctx), base)
    for root, dirs, files in os.walk(base):
        dirs[:] = sorted(name for name in dirs if name not in SKIP_DIRS)
        relative = Path(root).relative_to(base).as_posix()
        for name in sorted(files):
            path = Path(root, name)
            # `base` is resolved and os.walk does not follow directory links: only the
            # file itself can lead elsewhere.
            real = Path(os.path.realpath(path)) if os.path.islink(path) else path
            if within(real, roots) and not refused(real, ctx):
                yield (name if relative == "." else f"{relative}/{name}"), path, real


def _list(base: Path, pattern: str, ctx: ToolContext) -> ToolResult:
    matcher = glob_regex(pattern)
    shown = display_path(base, ctx)
    if not base.is_dir():
        raise ToolError(f"{shown} is not a directory")
    found: list[str] = []
    for relative, path, _ in _walk(base, ctx):
        if matcher.fullmatch(relative):
            found.append(display_path(path, ctx))
            if len(found) > MAX_LISTED:
                break
    if not found:
        return ToolResult(f"no files match {pattern!r} under {shown}")
    lines = sorted(found[:MAX_LISTED])
    if len(found) > MAX_LISTED:
        lines.append(f"[stopped after {MAX_LISTED} files; narrow the pattern or path]")
    return ToolResult("\n".join(lines))


class _Search:
    """One `grep` in a worker thread: bounded per line, in all, and stopped by `stop`."""

    def __init__(
        self, pattern: regex.Pattern[str], matcher: re.Pattern[str], ctx: ToolContext
    ) -> None:
        self.pattern = pattern
        self.matcher = matcher
        self.ctx = ctx
        import threading  # here: a session that never greps does not import it

        self.stop = threading.Event()
        self.deadline = time.monotonic() + GREP_TIME_LIMIT
        self.lines: list[str] = []
        self.used = self.skipped = self.slow = 0

    def run(self, base: Path) -> ToolResult:
        if base.is_dir():
            files: Iterator[tuple[Path, Path]] = (
                (path, real)
                for rel, path, real in _walk(base, self.ctx)
                if self.matcher.fullmatch(rel)
            )
        elif base.exists():
            files = iter([(base, base)])
        else:
            shown = display_path(base, self.ctx)
            raise ToolError(f"cannot search {shown}: no such file or directory")
        for path, real in files:
            stopped = self._search_file(path, real)
            if stopped is not None:
                return self._result(stopped)
        return self._result(None)

    def _search_file(self, path: Path, real: Path) -> str | None:
        """Add the file's matches (`real`'s text, shown as `path`'s); a note when the
        search must stop, else None."""
        text = _searchable_text(real)
        if text is None:
            self.skipped += 1
            return None
        for number, line in enumerate(text.split("\n"), start=1):
            if self.stop.is_set():
                return "[cancelled]"
            left = self.deadline - time.monotonic()
            if left <= 0:
                return f"[stopped after {GREP_TIME_LIMIT:g}s; narrow the pattern, glob or path]"
            try:
                found = self.pattern.search(line, timeout=min(MATCH_TIMEOUT, left))
            except TimeoutError:
                self.slow += 1
                continue
            if found:
                shown = display_path(path, self.ctx)
                hit = f"{shown}:{number}:{line.rstrip()[:MAX_LINE_CHARS]}"
                self.used += len(hit) + 1
                if len(self.lines) == MAX_MATCHES or self.used > self.ctx.output_cap:
                    n = len(self.lines)
                    return f"[stopped after {n} matches; narrow the pattern, glob or path]"
                self.lines.append(hit)
        return None

    def _result(self, stopped: str | None) -> ToolResult:
        lines = list(self.lines)
        if not lines and stopped is None:
            lines.append(f"no matches for {self.pattern.pattern!r}")
        if stopped is not None:
            lines.append(stopped)
        if self.slow:
            lines.append(
                f"[skipped {self.slow} lines: the pattern took over {MATCH_TIMEOUT:g}s on each; "
                "it backtracks (nested quantifiers such as (a|aa)+): simplify it]"
            )
        if self.skipped and stopped is None:
            lines.append(f"[skipped {self.skipped} binary, large or unreadable files]")
        return ToolResult("\n".join(lines))


def _searchable_text(path: Path) -> str | None:
    """The text of `path` (resolved, judged), or None for a binary, too large,
    unreadable or special file, or one a symlink now stands in the way of."""
    try:
        fd = open_resolved(path, os.O_RDONLY)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_GREP_FILE:
            return None
        try:
            data = file.read()
        except OSError:
            return None
    if b"\0" in data[:BINARY_SNIFF]:
        return None
    return data.decode("utf-8", "replace")
