"""The file tools: `read_file`, `write_file`, `edit_file`, `list_files` and `grep`.

Paths are relative to the project directory unless absolute. Text is UTF-8; a file
with a NUL byte near its start is binary and is reported, not shown. Listing and
searching skip `.git` and `.venv` directories and stop at a fixed number of results.
File work runs in a worker thread so a large tree does not stall the event loop.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hookgate.errors import ToolError
from hookgate.messages import ToolSpec
from hookgate.tools.base import BuiltinTool, ToolContext, ToolResult, display_path, resolve_path
from hookgate.tools.protected import protected_refusal

#: Lines `read_file` returns when the model gives no `limit`.
DEFAULT_READ_LINES = 2000
#: Bytes looked at for a NUL to tell a binary file from text.
BINARY_SNIFF = 8192
#: Paths `list_files` returns at most.
MAX_LISTED = 1000
#: Matching lines `grep` returns at most.
MAX_MATCHES = 200
#: Characters of a matching line `grep` shows.
MAX_LINE_CHARS = 300
#: Files larger than this many bytes are not searched by `grep`.
MAX_GREP_FILE = 4 * 1024 * 1024
#: Directory names listing and searching never descend into.
SKIP_DIRS = frozenset({".git", ".venv"})


def _schema(properties: Mapping[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": list(required),
            "additionalProperties": False}  # fmt: skip


_PATH = {"type": "string", "description": "File path, relative to the project directory."}
_DIR = {"type": "string", "default": ".", "description": "Directory to start in."}
_GLOB = {
    "type": "string",
    "default": "**/*",
    "description": "Glob on paths relative to `path`: `**` spans directories, `*` one name, "
    "`{a,b}` alternatives; e.g. `**/*.py`, `src/*.{ts,tsx}`.",
}


class ReadFileTool(BuiltinTool):
    """Show a text file, or a window of its lines."""

    spec = ToolSpec(
        name="read_file",
        description="Read a UTF-8 text file. Long files come in windows of lines: "
        "pass `offset` (first line, from 1) and `limit` (number of lines) to read on.",
        parameters=_schema(
            {
                "path": _PATH,
                "offset": {"type": "integer", "minimum": 1, "default": 1},
                "limit": {"type": "integer", "minimum": 1, "default": DEFAULT_READ_LINES},
            },
            "path",
        ),
    )
    needs_consent = False

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_path(args["path"], ctx)
        shown = display_path(path, ctx)
        return await asyncio.to_thread(
            _read_window, path, shown, args["offset"], args["limit"], ctx.output_cap
        )


class WriteFileTool(BuiltinTool):
    """Create or overwrite a file with the given text."""

    spec = ToolSpec(
        name="write_file",
        description="Write `content` to a file, replacing it if it exists; "
        "missing parent directories are created.",
        parameters=_schema(
            {"path": _PATH, "content": {"type": "string", "description": "The whole new text."}},
            "path",
            "content",
        ),
    )
    needs_consent = True

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_path(args["path"], ctx)
        shown = display_path(path, ctx)
        if refusal := protected_refusal(path, ctx):
            return refusal
        existed = await asyncio.to_thread(path.exists)
        size = await asyncio.to_thread(_write_text, path, shown, args["content"], True)
        return ToolResult(f"{'replaced' if existed else 'created'} {shown} ({size} bytes)")


class EditFileTool(BuiltinTool):
    """Replace an exact piece of a text file."""

    spec = ToolSpec(
        name="edit_file",
        description="Replace `old_string` with `new_string` in a file. `old_string` must match "
        "exactly (whitespace included) and occur once, unless `replace_all` is true.",
        parameters=_schema(
            {
                "path": _PATH,
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "replace_all": {"type": "boolean", "default": False},
            },
            "path",
            "old_string",
            "new_string",
        ),
    )
    needs_consent = True

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_path(args["path"], ctx)
        shown = display_path(path, ctx)
        if refusal := protected_refusal(path, ctx):
            return refusal
        old: str = args["old_string"]
        new: str = args["new_string"]
        if not old:
            raise ToolError("argument 'old_string' must not be empty; use write_file to create")
        if old == new:
            raise ToolError("old_string and new_string are the same: nothing to change")
        text = await asyncio.to_thread(_read_text, path, shown)
        count = text.count(old)
        if count == 0:
            raise ToolError(
                f"old_string not found in {shown}; it must match exactly, "
                "whitespace and indentation included (read_file shows the current text)"
            )
        if count > 1 and not args["replace_all"]:
            raise ToolError(
                f"old_string occurs {count} times in {shown}; include more surrounding "
                "text to make it unique, or set replace_all to true"
            )
        await asyncio.to_thread(_write_text, path, shown, text.replace(old, new), False)
        return ToolResult(f"replaced {count} occurrence{'s' * (count > 1)} in {shown}")


class ListFilesTool(BuiltinTool):
    """List the files whose paths match a glob."""

    spec = ToolSpec(
        name="list_files",
        description=f"List files (not directories) matching a glob, sorted, at most {MAX_LISTED}; "
        "`.git` and `.venv` are skipped.",
        parameters=_schema({"pattern": _GLOB, "path": _DIR}),
    )
    needs_consent = False

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        base = resolve_path(args["path"], ctx)
        return await asyncio.to_thread(_list, base, args["pattern"], ctx)


class GrepTool(BuiltinTool):
    """Search files for a regular expression."""

    spec = ToolSpec(
        name="grep",
        description="Search text files for a Python regular expression; returns "
        f"`path:line:text` lines, at most {MAX_MATCHES}. `.git` and `.venv` are skipped.",
        parameters=_schema(
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
        try:
            regex = re.compile(args["pattern"], re.IGNORECASE if args["ignore_case"] else 0)
        except re.error as exc:
            raise ToolError(f"invalid regular expression {args['pattern']!r}: {exc}") from exc
        base = resolve_path(args["path"], ctx)
        return await asyncio.to_thread(_grep, base, regex, glob_regex(args["glob"]), ctx)


def _os_error(action: str, shown: str, exc: OSError) -> ToolError:
    hint = "; use list_files for a directory" if isinstance(exc, IsADirectoryError) else ""
    return ToolError(f"cannot {action} {shown}: {exc.strerror or exc}{hint}")


def _require_regular(path: Path, shown: str, action: str) -> None:
    """Refuse a directory, FIFO or device: opening one could block a worker forever."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise _os_error(action, shown, exc) from exc
    if stat.S_ISDIR(mode):
        raise ToolError(f"cannot {action} {shown}: Is a directory; use list_files for a directory")
    if not stat.S_ISREG(mode):
        raise ToolError(f"cannot {action} {shown}: not a regular file")


def _read_window(path: Path, shown: str, offset: int, limit: int, cap: int) -> ToolResult:
    _require_regular(path, shown, "read")
    kept: list[bytes] = []
    used = total = 0
    full = cut = False  # full: the window is complete; cut: its one line is cut at `cap`
    try:
        with path.open("rb") as file:
            if b"\0" in file.read(BINARY_SNIFF):
                size = os.fstat(file.fileno()).st_size
                return ToolResult(f"{shown} is a binary file ({size} bytes); not shown", True)
            file.seek(0)
            for total, line in enumerate(file, start=1):
                if total < offset or full:
                    continue
                if used + len(line) > cap and kept:
                    full = True
                    continue
                cut = len(line) > cap
                kept.append(line[:cap])
                used += len(kept[-1])
                full = len(kept) >= limit or used >= cap
    except OSError as exc:
        raise _os_error("read", shown, exc) from exc
    if total == 0:
        return ToolResult(f"[{shown} is empty]")
    if offset > total:
        raise ToolError(f"{shown} has {total} lines; offset {offset} is past the end")
    text = b"".join(kept).decode("utf-8", "replace")
    last = offset + len(kept) - 1
    notes = [f"[line {last} is cut at {cap} bytes]"] if cut else []
    if last < total:
        notes.append(f"[lines {offset}-{last} of {total}; read on with offset={last + 1}]")
    return ToolResult("\n".join([text.removesuffix("\n"), *notes]) if notes else text)


def _read_text(path: Path, shown: str) -> str:
    _require_regular(path, shown, "read")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _os_error("read", shown, exc) from exc
    if b"\0" in data[:BINARY_SNIFF]:
        raise ToolError(f"{shown} is a binary file; only text files can be edited")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown} is not UTF-8 text (byte {exc.start}); it cannot be edited"
        ) from exc


def _write_text(path: Path, shown: str, text: str, make_parents: bool) -> int:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"the text for {shown} is not valid Unicode: {exc.reason}") from exc
    if path.exists():
        _require_regular(path, shown, "write")
    try:
        if make_parents:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise _os_error("write", shown, exc) from exc
    return len(data)


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


def _walk(base: Path) -> Iterator[tuple[str, Path]]:
    """Each file under `base` as (its `/`-separated path relative to `base`, its path)."""
    for root, dirs, files in os.walk(base):
        dirs[:] = sorted(name for name in dirs if name not in SKIP_DIRS)
        relative = Path(root).relative_to(base).as_posix()
        for name in sorted(files):
            yield (name if relative == "." else f"{relative}/{name}"), Path(root, name)


def _list(base: Path, pattern: str, ctx: ToolContext) -> ToolResult:
    matcher = glob_regex(pattern)
    shown = display_path(base, ctx)
    if not base.is_dir():
        raise ToolError(f"{shown} is not a directory")
    found: list[str] = []
    for relative, path in _walk(base):
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


def _grep(
    base: Path, regex: re.Pattern[str], matcher: re.Pattern[str], ctx: ToolContext
) -> ToolResult:
    if base.is_dir():
        files: Iterator[tuple[str, Path]] = (
            (rel, path) for rel, path in _walk(base) if matcher.fullmatch(rel)
        )
    elif base.exists():
        files = iter([(base.name, base)])
    else:
        raise ToolError(f"cannot search {display_path(base, ctx)}: no such file or directory")
    lines: list[str] = []
    used = skipped = 0
    for _, path in files:
        text = _searchable_text(path)
        if text is None:
            skipped += 1
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            if regex.search(line):
                hit = f"{display_path(path, ctx)}:{number}:{line.rstrip()[:MAX_LINE_CHARS]}"
                used += len(hit) + 1
                if len(lines) == MAX_MATCHES or used > ctx.output_cap:
                    lines.append(
                        f"[stopped after {len(lines)} matches; narrow the pattern, glob or path]"
                    )
                    return ToolResult("\n".join(lines))
                lines.append(hit)
    if not lines:
        lines.append(f"no matches for {regex.pattern!r}")
    if skipped:
        lines.append(f"[skipped {skipped} binary, large or unreadable files]")
    return ToolResult("\n".join(lines))


def _searchable_text(path: Path) -> str | None:
    """The text of `path`, or None for a binary, too large, unreadable or special file."""
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_GREP_FILE:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:BINARY_SNIFF]:
        return None
    return data.decode("utf-8", "replace")
