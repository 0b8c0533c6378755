"""The steps of one hook's run that need nothing of the engine: the event field a
matcher is matched against, a process hook's input, what an http hook POSTs, a Python
hook called (or awaited on a loop of its own), and what an observer is told of the run.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Coroutine, Iterator, Mapping

from hookgate.hooks.events import EventSpec, MatchOn
from hookgate.hooks.formats import FORMATS, ReplyFormat
from hookgate.hooks.formats.base import has_big_text
from hookgate.hooks.process.core import Input

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hookgate.hooks.chain import Chain
    from hookgate.hooks.config import HookSpec
    from hookgate.hooks.kinds.http.run import HttpRequest
    from hookgate.hooks.observe import HookRun


def run_of(hook: HookSpec, chain: Chain, began: int, error: Exception | None) -> HookRun:
    """What the observer is told of `hook`'s run, which began at `began`."""
    from hookgate.hooks.observe import HookRun  # with an observer only

    if error is not None:
        outcome = "timeout" if isinstance(error, TimeoutError) else "failed"
    else:
        outcome = "blocked" if chain.blocked_by is hook else "allowed"
    status, chain.exit_status = chain.exit_status, None
    return HookRun(hook, began, time.time_ns() - began, outcome, status)


def call_python(hook: HookSpec, envelope: dict[str, Any]) -> Any:
    """Call a Python hook on a copy of the payload; its answer may still be awaitable."""
    import copy  # Python hooks alone: the start-up of the others does not import it

    assert hook.function is not None
    return hook.function(copy.deepcopy(envelope))


def await_alone(answer: Awaitable[Any], timeout: float) -> Any:
    """An async Python hook's answer, awaited on an event loop of its own."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        if isinstance(answer, Coroutine):
            answer.close()  # it will never run: no "never awaited" warning
        raise RuntimeError("an async Python hook under run_sync, in a running event loop")

    async def wait() -> Any:
        async with asyncio.timeout(timeout):
            return await answer

    return asyncio.run(wait())


def event_input(
    fmt: ReplyFormat, chain: Chain, envelope: dict[str, Any]
) -> bytes | Iterator[bytes]:
    """A process hook's input: the event encoded, in pieces while they are written where
    its payload holds a large text (a 50 MB result is then never held twice). The
    fields the engine adds to the payload are short: the payload alone is looked at."""
    if has_big_text(chain.payload) and (pieces := getattr(fmt, "encode_pieces", None)):
        return pieces(chain.spec, envelope)  # type: ignore[no-any-return]
    return fmt.encode(chain.spec, envelope)


def resident_input(fmt: ReplyFormat, chain: Chain, envelope: dict[str, Any]) -> Input:
    """A persistent hook's event: the bytes its format writes, or, where its payload holds
    a large text, a function that makes them in pieces (`kinds.persistent.run.event_line`),
    called again if the event goes to a new process."""
    if has_big_text(chain.payload) and (pieces := getattr(fmt, "encode_pieces", None)):
        return lambda: pieces(chain.spec, envelope)
    return fmt.encode(chain.spec, envelope)


def http_request(
    hook: HookSpec,
    fmt: ReplyFormat,
    chain: Chain,
    envelope: dict[str, Any],
    environ: Mapping[str, str],
) -> HttpRequest:
    """What an http hook POSTs: the bytes a process hook reads on stdin, its headers'
    `$VAR`s read in `environ`."""
    assert hook.http is not None
    from hookgate.hooks.kinds.http.run import HttpRequest  # by the first http hook

    return HttpRequest(
        url=hook.http.url,
        body=fmt.encode(chain.spec, envelope),
        headers=hook.http.resolve_headers(environ),
        timeout=hook.timeout,
    )


def as_named_by(hook: HookSpec, target: str | None) -> str | None:
    """The tool or agent name as the hook's format names it (Claude's `Bash` for `shell`);
    a payload field (a session's `source`) as it is."""
    if target is None or hook.event.match_on not in (MatchOn.TOOL, MatchOn.AGENT):
        return target
    return FORMATS[hook.format].match_name(target)


def matched_field(spec: EventSpec, payload: Mapping[str, Any]) -> str | None:
    """What a hook of `spec` matches its matcher against: the tool, the agent, a field."""
    if spec.match_on is MatchOn.TOOL:
        return str(payload.get("tool", ""))
    if spec.match_on is MatchOn.AGENT:
        return str(payload.get("agent", ""))
    if spec.match_on is MatchOn.NOTHING:
        return None
    return str(payload.get(spec.match_on.value, ""))  # a field: `source`, `trigger`
