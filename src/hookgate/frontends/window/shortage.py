"""A shortage of file descriptors, said once: on stderr, where each request or each
refused connection would otherwise print a traceback of its own."""

from __future__ import annotations

import errno
import resource
import sys
from collections.abc import Mapping
from typing import Any

#: What the user reads of the shortage, in the 503's error and on stderr.
DESCRIPTOR_SHORTAGE = "hookgate window is out of file descriptors"
_said = False


def descriptor_shortage(exc: BaseException | None) -> OSError | None:
    """The process (EMFILE) or the system (ENFILE) out of descriptors, if that is what
    `exc` is, or was raised from (a `HookgateError` that could not read a file)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def say_descriptor_shortage(exc: OSError) -> None:
    """One line on stderr, the first time only, with the limit and what to do."""
    global _said
    if _said:
        return
    _said = True
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    print(f"hookgate: {DESCRIPTOR_SHORTAGE} ({exc.strerror}; ulimit -n is {soft}): requests are "
          "answered 503 until sessions close (POST /api/sessions/ID/close, or lower "
          "--max-sessions)", file=sys.stderr, flush=True)  # fmt: skip


def quiet_shortage_handler(loop: Any, context: Mapping[str, Any]) -> None:
    """An event loop exception handler: asyncio's accept loop, out of descriptors, logs a
    traceback each time it retries (every second); it is said once instead."""
    shortage = descriptor_shortage(context.get("exception"))
    if shortage is not None:
        say_descriptor_shortage(shortage)
        return
    loop.default_exception_handler(context)
