"""The file tools that read and change one file: `read_file`, `write_file`, `edit_file`.

Every path goes through `paths.open_path` (normalised, `$HOOKGATE_HOME` refused, protected
files never written). Text is UTF-8; a file with a NUL byte near its start is binary and
is reported, not shown. File work runs in a worker thread so the event loop never stalls.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from hookgate.errors import ToolError
from hookgate.messages import ToolSpec
from hookgate.tools.base import BuiltinTool, ToolContext, ToolResult, object_schema
from hookgate.tools.paths import display_path, open_path, open_resolved

TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
else:
    from hookgate.hooks.loop import asyncio  # imported once a turn waits

#: Lines `read_file` returns when the model gives no `limit`.
DEFAULT_READ_LINES = 2000
#: Bytes looked at for a NUL to tell a binary file from text.
BINARY_SNIFF = 8192
#: Bytes of a file the tools read at most: `read_file` up to its window and then to
#: count the lines after it, `edit_file` all it holds. A command makes a file of 16 GiB
#: in an instant (a sparse one, with no line break); the tools never take it into memory,
#: nor spend the turn reading it.
MAX_TEXT_FILE = 64 * 1024 * 1024
#: Bytes read at a time past a line's first `output_cap`, which are dropped.
_SKIP_CHUNK = 1024 * 1024

_PATH = {"type": "string", "description": "File path, relative to the project directory."}


class ReadFileTool(BuiltinTool):
    """Show a text file, or a window of its lines."""

    spec = ToolSpec(
        name="read_file",
        description="Read a UTF-8 text file. Long files come in windows of lines: "
        "pass `offset` (first line, from 1) and `limit` (number of lines) to read on.",
        parameters=object_schema(
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
        path = open_path(args["path"], ctx)
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
        parameters=object_schema(
            {"path": _PATH, "content": {"type": "string", "description": "The whole new text."}},
            "path",
            "content",
        ),
    )
    needs_consent = True

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = open_path(args["path"], ctx, writing=True)
        shown = display_path(path, ctx)
        existed = await asyncio.to_thread(path.exists)
        size = await asyncio.to_thread(_write_text, path, shown, args["content"], True)
        return ToolResult(f"{'replaced' if existed else 'created'} {shown} ({size} bytes)")


class EditFileTool(BuiltinTool):
    """Replace an exact piece of a text file."""

    spec = ToolSpec(
        name="edit_file",
        description="Replace `old_string` with `new_string` in a file. `old_string` must match "
        "exactly (whitespace included) and occur once, unless `replace_all` is true.",
        parameters=object_schema(
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
        path = open_path(args["path"], ctx, writing=True)
        shown = display_path(path, ctx)
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


def _os_error(action: str, shown: str, exc: OSError) -> ToolError:
    hint = "; use list_files for a directory" if isinstance(exc, IsADirectoryError) else ""
    return ToolError(f"cannot {action} {shown}: {exc.strerror or exc}{hint}")


def _require_regular(path: Path, shown: str, action: str) -> None:
    """Refuse a directory, FIFO or device before a write opens it (`_opened` checks
    the descriptor it reads through itself)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise _os_error(action, shown, exc) from exc
    _regular(mode, shown, action)


def _regular(mode: int, shown: str, action: str) -> None:
    if stat.S_ISDIR(mode):
        raise ToolError(f"cannot {action} {shown}: Is a directory; use list_files for a directory")
    if not stat.S_ISREG(mode):
        raise ToolError(f"cannot {action} {shown}: not a regular file")


def _opened(
    path: Path, shown: str, action: str, *, writing: bool = False, make_parents: bool = False
) -> BinaryIO:
    """`path` opened as `open_path` judged it (`open_resolved`), a regular file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC if writing else os.O_RDONLY
    try:
        fd = open_resolved(path, flags, make_parents=make_parents)
    except OSError as exc:
        raise _os_error(action, shown, exc) from exc
    try:
        _regular(os.fstat(fd).st_mode, shown, action)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "wb" if writing else "rb")


def _read_window(path: Path, shown: str, offset: int, limit: int, cap: int) -> ToolResult:
    kept: list[bytes] = []
    used = total = read = 0
    full = cut = False  # full: the window is complete; cut: its one line is cut at `cap`
    try:
        with _opened(path, shown, "read") as file:
            if b"\0" in file.read(BINARY_SNIFF):
                size = os.fstat(file.fileno()).st_size
                return ToolResult(f"{shown} is a binary file ({size} bytes); not shown", True)
            file.seek(0)
            for total, (line, length) in enumerate(_capped_lines(file, cap), start=1):
                read += length
                if total < offset or full:
                    continue
                if used + len(line) > cap and kept:
                    full = True
                    continue
                cut = length > cap
                kept.append(line)
                used += len(line)
                full = len(kept) >= limit or used >= cap
    except OSError as exc:
        raise _os_error("read", shown, exc) from exc
    counted = read <= MAX_TEXT_FILE  # else the lines were counted that far
    if total == 0:
        return ToolResult(f"[{shown} is empty]")
    if offset > total:
        if not counted:
            raise ToolError(
                f"{shown} holds more than {MAX_TEXT_FILE} bytes before line {offset}; "
                "read_file reads no further: use the shell (`sed -n`, `tail`)"
            )
        raise ToolError(f"{shown} has {total} lines; offset {offset} is past the end")
    text = b"".join(kept).decode("utf-8", "replace")
    last = offset + len(kept) - 1
    notes = [f"[line {last} is cut at {cap} bytes]"] if cut else []
    if not counted:
        notes.append(f"[lines {offset}-{last} of at least {total}; read on with offset={last + 1}]")
    elif last < total:
        notes.append(f"[lines {offset}-{last} of {total}; read on with offset={last + 1}]")
    return ToolResult("\n".join([text.removesuffix("\n"), *notes]) if notes else text)


def _capped_lines(file: BinaryIO, cap: int) -> Iterator[tuple[bytes, int]]:
    """Each line of `file` as its first `cap` bytes and its whole length, the rest of it
    read and dropped; until the end, or until more than `MAX_TEXT_FILE` bytes are read."""
    read = 0
    while read <= MAX_TEXT_FILE:
        line = file.readline(cap)
        length = len(line)
        if not line:
            return
        if length == cap and not line.endswith(b"\n"):  # a longer line: drop the rest
            while read + length <= MAX_TEXT_FILE:
                rest = file.readline(_SKIP_CHUNK)
                length += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
        read += length
        yield line, length


def _read_text(path: Path, shown: str) -> str:
    try:
        with _opened(path, shown, "read") as file:
            data = file.read(MAX_TEXT_FILE + 1)
    except OSError as exc:
        raise _os_error("read", shown, exc) from exc
    if len(data) > MAX_TEXT_FILE:
        raise ToolError(
            f"{shown} holds more than {MAX_TEXT_FILE} bytes; edit_file edits smaller files "
            "(use the shell for this one)"
        )
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
        with _opened(path, shown, "write", writing=True, make_parents=make_parents) as file:
            file.write(data)
    except OSError as exc:
        raise _os_error("write", shown, exc) from exc
    return len(data)
