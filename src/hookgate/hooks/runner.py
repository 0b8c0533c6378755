"""Run an event's hooks in order and fold their replies into one `Outcome`.

Every event starts allowed; each hook sees the payload as the hooks before it left
it; the first block ends the chain (on events that can block); a failing hook never
raises out of here: its `onError` decides what the failure means.
"""

from __future__ import annotations

import copy
import inspect
import os
import sys
from collections.abc import Awaitable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from hookgate.hooks.config import HooksConfig, HookSpec
from hookgate.hooks.errors import ConfigError
from hookgate.hooks.events import EVENT_NAMES, EVENTS, EventSpec, MatchOn, OnError
from hookgate.hooks.formats import (
    FORMATS,
    BadReply,
    HookReply,
    Permission,
    ReplyFormat,
    reply_from_json,
)
from hookgate.hooks.outcome import HookFailure, Outcome
from hookgate.hooks.process import ProcessResult, SpawnError, run_process_sync
from hookgate.hooks.yamlfile import did_you_mean

if TYPE_CHECKING:  # each kind's module is imported by the first hook of that kind
    from hookgate.hooks.http import HttpPool, HttpRequest
    from hookgate.hooks.modelcheck import ModelChecks
    from hookgate.hooks.persistent import PersistentHooks
    from hookgate.hooks.pins import FilePins

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass
class _Chain:
    """The state an event's hooks build up as they run."""

    spec: EventSpec
    payload: dict[str, Any]
    context: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    errors: list[HookFailure] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    changed_by: dict[str, str] = field(default_factory=dict)
    blocked_by: HookSpec | None = None
    reason: str | None = None
    response: str | None = None
    hooks_run: int = 0
    failed_safe: bool = False
    """A hook under `onError: fail` failed: the hooks after it do not run (they would
    read a payload it did not make safe, even on an event that cannot block)."""
    permission: Permission | None = None
    stop_reason: str | None = None
    go_on: list[str] = field(default_factory=list)

    def over(self) -> bool:
        return self.blocked_by is not None or self.failed_safe or self.stop_reason is not None

    def outcome(self) -> Outcome:
        return Outcome(
            event=self.spec.name,
            payload=self.payload,
            blocked=self.blocked_by is not None,
            reason=self.reason,
            blocked_by=self.blocked_by.name if self.blocked_by else None,
            response=self.response,
            context=tuple(self.context),
            notices=tuple(self.notices),
            errors=tuple(self.errors),
            changed=tuple(self.changed),
            changed_by=dict(self.changed_by),
            hooks_run=self.hooks_run,
            permission=self.permission,
            stop_reason=self.stop_reason,
            continue_with="\n\n".join(self.go_on) or None,
        )


class HookEngine:
    """The hooks of one session, read once: `await engine.run(event, payload)`, or
    `engine.run_sync(event, payload)` where there is no event loop.

    `session_id`, `project_dir` and `asked_depth` reach every hook, in its payload
    and as `HOOKGATE_*` variables. `extra` adds hooks (Python callables, usually)
    after those of the config, event by event. `transcript_path`, where the embedder
    keeps the conversation as Claude Code's JSONL, reaches hooks as a payload field
    (`transcript_path` in the claude format, too). `permission_mode` (how tool calls
    are consented to: `default`, `dontAsk`, `bypassPermissions`) and `asked_agent`
    (the name this agent was asked under) reach hooks in the payload too. With
    `pinned` (absolute path → sha256 hex, as trusted at session start), a process hook
    runs only while each file it names has its pinned digest; any other is a failure
    of that hook (`pins`). http
    hooks share pooled connections that `await engine.aclose()` (or `engine.close()`
    after `run_sync` alone) closes.
    """

    def __init__(
        self,
        config: HooksConfig | None = None,
        *,
        session_id: str,
        project_dir: str | None = None,
        asked_depth: int = 0,
        extra: Iterable[HookSpec] = (),
        environ: Mapping[str, str] | None = None,
        pinned: Mapping[str, str | None] | None = None,
        transcript_path: str | None = None,
        permission_mode: str | None = None,
        asked_agent: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.project_dir = os.path.abspath(project_dir or os.getcwd())
        self.asked_depth = asked_depth
        self.permission_mode = permission_mode
        self.asked_agent = asked_agent
        hooks = {event: list(specs) for event, specs in (config.hooks if config else {}).items()}
        for spec in extra:
            hooks.setdefault(spec.event.name, []).append(spec)
        self._hooks: dict[str, tuple[HookSpec, ...]] = {e: tuple(s) for e, s in hooks.items() if s}
        base_env = dict(os.environ if environ is None else environ)
        self._environ = base_env
        self._env = {id(spec): self._hook_env(spec, base_env) for spec in self}
        self._pins: FilePins | None = None
        self._files: dict[int, list[Path]] = {}
        if pinned is not None:
            from hookgate.hooks.pins import FilePins, hook_files

            self._pins = FilePins(pinned)
            self._files = {id(spec): hook_files(spec, Path(self.project_dir)) for spec in self}

    # The http pool, the checkers and the persistent hooks are made (and their modules
    # imported) by the first hook that needs them: a start-up pays for the kinds it runs.
    @cached_property
    def _http(self) -> HttpPool:
        from hookgate.hooks.http import HttpPool

        return HttpPool()

    @cached_property
    def checks(self) -> ModelChecks:
        """The model hooks' checker clients and verdict cache (`checks.calls` counts calls)."""
        from hookgate.hooks.modelcheck import ModelChecks

        return ModelChecks(self._environ)

    @cached_property
    def _persistent(self) -> PersistentHooks:
        from hookgate.hooks.persistent import PersistentHooks

        return PersistentHooks()

    def _made(self, name: str) -> Any:
        """The part `name` if a hook made it, else None: closing makes none."""
        return self.__dict__.get(name)

    async def aclose(self) -> None:
        """Stop the persistent hooks' processes; close the http hooks' and the checkers'
        connections."""
        try:
            if (persistent := self._made("_persistent")) is not None:
                await persistent.aclose()
        finally:
            try:
                if (checks := self._made("checks")) is not None:
                    await checks.aclose()
            finally:
                if (http := self._made("_http")) is not None:
                    await http.aclose()

    def close(self) -> None:
        """`aclose` for `run_sync` callers: processes, connections and the http thread."""
        try:
            if (persistent := self._made("_persistent")) is not None:
                persistent.close()
        finally:
            if (http := self._made("_http")) is not None:
                http.close()

    def __iter__(self) -> Any:
        for event in EVENTS:
            yield from self._hooks.get(event, ())

    def hooks_for(self, event: str) -> tuple[HookSpec, ...]:
        """The hooks of `event` (either spelling), in the order they run."""
        return self._hooks.get(EVENT_NAMES.get(event, event), ())

    async def run(
        self, event: str, payload: Mapping[str, Any], *, skip: Iterable[HookSpec] = ()
    ) -> Outcome:
        """Run the hooks of `event` on `payload` (the event's own fields); those in
        `skip` do not run (a guardrail the user approved this call past, once)."""
        name, hooks = self._matching(event, payload, skip)
        if not hooks:
            return Outcome(event=name, payload=payload)
        chain = _Chain(EVENTS[name], dict(payload))
        for hook in hooks:
            try:
                reply = await self._ask(hook, chain)
            except Exception as exc:
                self._fail(hook, chain, _failure(hook, exc))
            else:
                _apply(hook, reply, chain)
            if chain.over():
                break
        return chain.outcome()

    def run_sync(self, event: str, payload: Mapping[str, Any]) -> Outcome:
        """`run` for a caller without an event loop; the thread waits for the hooks.

        Process hooks run through `run_process_sync`, with the same guarantees; http
        hooks on the engine's own event loop, in a background thread. An
        async Python hook runs on an event loop of its own, which it cannot where this
        thread already runs one: there, `await run(...)`.
        """
        name, hooks = self._matching(event, payload)
        if not hooks:
            return Outcome(event=name, payload=payload)
        chain = _Chain(EVENTS[name], dict(payload))
        for hook in hooks:
            try:
                reply = self._ask_sync(hook, chain)
            except Exception as exc:
                self._fail(hook, chain, _failure(hook, exc))
            else:
                _apply(hook, reply, chain)
            if chain.over():
                break
        return chain.outcome()

    def _matching(
        self, event: str, payload: Mapping[str, Any], skip: Iterable[HookSpec] = ()
    ) -> tuple[str, list[HookSpec]]:
        """The canonical name of `event` and its hooks that match `payload`, in order."""
        name = EVENT_NAMES.get(event)
        if name is None:
            raise ConfigError(f"unknown event {event!r}", hint=did_you_mean(event, EVENT_NAMES))
        hooks = self._hooks.get(name)
        if not hooks:
            return name, []
        target = _target(EVENTS[name], payload)
        skipped = {id(hook) for hook in skip}
        return name, [
            hook
            for hook in hooks
            if id(hook) not in skipped and hook.matches(_as_named_by(hook, target))
        ]

    async def _ask(self, hook: HookSpec, chain: _Chain) -> HookReply:
        chain.hooks_run += 1
        envelope = self._envelope(chain)
        # asyncio is imported here, on the path that runs on an event loop, already loaded
        # there; a synchronous embedder (`run_sync`, `hooks fire`) never imports it.
        import asyncio

        from hookgate.hooks.process.aio import run_process

        if hook.function is not None:
            answer = _call(hook, envelope)
            if inspect.isawaitable(answer):
                async with asyncio.timeout(hook.timeout):
                    answer = await answer
            return _python_reply(chain.spec, envelope, answer)
        if hook.model is not None:
            return await self.checks.verdict(hook.model, chain.spec.name, envelope, hook.timeout)
        fmt = FORMATS[hook.format]
        if hook.http is not None:
            from hookgate.hooks.http import post_event

            result = await post_event(
                self._http.async_client(), self._http_request(hook, fmt, chain, envelope)
            )
        elif hook.persistent:
            self._check_pins(hook)
            result = await self._persistent.ask(
                hook, fmt.encode(chain.spec, envelope), **self._resident_options(hook)
            )
        else:
            self._check_pins(hook)
            result = await run_process(
                hook.argv(), **self._process_options(hook, fmt, chain, envelope)
            )
        return _process_reply(fmt, chain.spec, envelope, result)

    def _ask_sync(self, hook: HookSpec, chain: _Chain) -> HookReply:
        chain.hooks_run += 1
        envelope = self._envelope(chain)
        if hook.function is not None:
            answer = _call(hook, envelope)
            if inspect.isawaitable(answer):
                answer = _await_alone(answer, hook.timeout)
            return _python_reply(chain.spec, envelope, answer)
        if hook.model is not None:
            verdict = self.checks.verdict_closing(
                hook.model, chain.spec.name, envelope, hook.timeout
            )
            return _await_alone(verdict, hook.timeout)  # type: ignore[no-any-return]
        fmt = FORMATS[hook.format]
        if hook.http is not None:
            result = self._http.post_sync(self._http_request(hook, fmt, chain, envelope))
        elif hook.persistent:
            self._check_pins(hook)
            result = self._persistent.ask_sync(
                hook, fmt.encode(chain.spec, envelope), **self._resident_options(hook)
            )
        else:
            self._check_pins(hook)
            result = run_process_sync(
                hook.argv(), **self._process_options(hook, fmt, chain, envelope)
            )
        return _process_reply(fmt, chain.spec, envelope, result)

    def _check_pins(self, hook: HookSpec) -> None:
        if self._pins is not None:
            for path in self._files[id(hook)]:
                self._pins.check(path)

    def _process_options(
        self, hook: HookSpec, fmt: ReplyFormat, chain: _Chain, envelope: dict[str, Any]
    ) -> dict[str, Any]:
        """How a process hook runs: everything but its command line."""
        return {
            "stdin": lambda: fmt.encode(chain.spec, envelope),  # encoded while it starts
            "env": self._env[id(hook)],
            "cwd": hook.cwd or self.project_dir,
            "timeout": hook.timeout,
        }

    def _resident_options(self, hook: HookSpec) -> dict[str, Any]:
        return {"env": self._env[id(hook)], "cwd": hook.cwd or self.project_dir}

    def _http_request(
        self, hook: HookSpec, fmt: ReplyFormat, chain: _Chain, envelope: dict[str, Any]
    ) -> HttpRequest:
        """What an http hook POSTs: the bytes a process hook reads on stdin."""
        assert hook.http is not None
        from hookgate.hooks.http import HttpRequest

        return HttpRequest(
            url=hook.http.url,
            body=fmt.encode(chain.spec, envelope),
            headers=hook.http.resolve_headers(self._environ),
            timeout=hook.timeout,
        )

    def _envelope(self, chain: _Chain) -> dict[str, Any]:
        envelope: dict[str, Any] = {
            "event": chain.spec.name,
            "session_id": self.session_id,
            "cwd": self.project_dir,
        }
        if self.transcript_path is not None:
            envelope["transcript_path"] = self.transcript_path
        if self.permission_mode is not None:
            envelope["permission_mode"] = self.permission_mode
        if self.asked_depth:
            asked: dict[str, Any] = {"depth": self.asked_depth}
            if self.asked_agent is not None:
                asked["agent"] = self.asked_agent
            envelope["asked"] = asked
        envelope.update(chain.payload)
        return envelope

    def _fail(self, hook: HookSpec, chain: _Chain, message: str) -> None:
        failure = HookFailure(hook.name, chain.spec.name, message, hook.on_error)
        if hook.on_error is OnError.IGNORE:
            return
        chain.errors.append(failure)
        if hook.on_error is OnError.WARN:
            chain.notices.append(str(failure))
            return
        chain.failed_safe = True
        _block(hook, chain, f"hook {hook.name!r} failed: {message}")

    def _hook_env(self, hook: HookSpec, base: Mapping[str, str]) -> dict[str, str]:
        env = {**base, **FORMATS[hook.format].environment(self.project_dir), **hook.env}
        env.update(
            HOOKGATE_EVENT=hook.event.name,
            HOOKGATE_HOOK_NAME=hook.name,
            HOOKGATE_SESSION_ID=self.session_id,
            HOOKGATE_PROJECT_DIR=self.project_dir,
            HOOKGATE_ASKED_DEPTH=str(self.asked_depth),
        )
        return env


def _call(hook: HookSpec, envelope: dict[str, Any]) -> Any:
    """Call a Python hook on a copy of the payload; its answer may still be awaitable."""
    assert hook.function is not None
    return hook.function(copy.deepcopy(envelope))


def _await_alone(answer: Awaitable[Any], timeout: float) -> Any:
    """An async Python hook's answer, awaited on an event loop of its own."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        if inspect.iscoroutine(answer):
            answer.close()  # it will never run: no "never awaited" warning
        raise RuntimeError("an async Python hook under run_sync, in a running event loop")

    async def wait() -> Any:
        async with asyncio.timeout(timeout):
            return await answer

    return asyncio.run(wait())


def _python_reply(spec: EventSpec, envelope: dict[str, Any], answer: Any) -> HookReply:
    """A Python hook's answer, validated as a native reply."""
    if answer is None:
        return HookReply()
    if isinstance(answer, HookReply):
        answer = _as_native(answer)  # built by hand: validated like any other answer
    if not isinstance(answer, Mapping):
        raise BadReply(f"a Python hook must return a mapping or None, got {type(answer).__name__}")
    return reply_from_json(spec, envelope, answer)


def _process_reply(
    fmt: ReplyFormat, spec: EventSpec, envelope: dict[str, Any], result: ProcessResult
) -> HookReply:
    if result.timed_out:
        raise TimeoutError
    return fmt.decode(spec, envelope, result)


#: Failures whose message is the whole story: no exception type to name. By module,
#: and read only from modules already imported: one not imported raised nothing.
_SAYS_WHAT_WENT_WRONG = {
    "hookgate.hooks.pins": "UnpinnedFile", "hookgate.hooks.httptarget": "HttpHookError",
    "hookgate.hooks.modelcheck": "CheckerError", "hookgate.hooks.scriptedchecker": "ScriptError",
    "hookgate.hooks.process.resident": "ResidentFailure",
}  # fmt: skip


def _says_what_went_wrong(exc: Exception) -> bool:
    return isinstance(exc, BadReply | SpawnError) or any(
        isinstance(exc, getattr(sys.modules[module], name))
        for module, name in _SAYS_WHAT_WENT_WRONG.items()
        if module in sys.modules
    )


def _failure(hook: HookSpec, exc: Exception) -> str:
    """What a hook's failure says, in its notice or its block reason."""
    if isinstance(exc, TimeoutError):
        return f"timed out after {hook.timeout:g}s"
    if _says_what_went_wrong(exc):
        return str(exc)
    return f"raised {type(exc).__name__}: {exc}"  # a Python hook's own bug: its failure


def _as_native(reply: HookReply) -> dict[str, Any]:
    """The native reply a `HookReply` stands for, so that it passes the same validation."""
    if reply.permission or reply.stop is not None or reply.go_on:
        raise BadReply("a Python hook cannot set permission, stop or go_on yet: no native "
                       "reply field says them")  # fmt: skip
    fields = {"reason": reply.reason, "context": reply.context, "message": reply.message}
    clash = set(reply.changes) & {"action", *fields}
    if clash:
        raise BadReply(f"HookReply.changes cannot set {', '.join(sorted(clash))}")
    native = {**reply.changes, "action": "block" if reply.block else "allow"}
    native.update((key, value) for key, value in fields.items() if value is not None)
    return native


def _apply(hook: HookSpec, reply: HookReply, chain: _Chain) -> None:
    if reply.block and chain.spec.can_block:
        chain.response = reply.message  # shown as the answer, not as a notice
    elif reply.message:
        chain.notices.append(f"{hook.name}: {reply.message}")
    # Changes apply with a block too: a denied call's replaced arguments are a redaction.
    for key, value in reply.changes.items():
        chain.payload[key] = value
        chain.changed_by[key] = hook.name  # the last hook to change a field is named
        if key not in chain.changed:
            chain.changed.append(key)
    if reply.permission == "ask" or (reply.permission and chain.permission is None):
        chain.permission = reply.permission  # ask wins over allow; a block over both
    if reply.go_on:
        chain.go_on.append(reply.go_on)
    if reply.stop is not None:
        chain.stop_reason = reply.stop
        chain.notices.append(f"{hook.name} asked to stop: {reply.stop}")
    if reply.block:
        _block(hook, chain, reply.reason or f"blocked by hook {hook.name!r}")
        if chain.spec.can_block:
            return
    if reply.context:
        chain.context.append(reply.context)


def _block(hook: HookSpec, chain: _Chain, reason: str) -> None:
    if chain.spec.can_block:
        chain.blocked_by, chain.reason = hook, reason
        return
    # Too late to stop anything: the objection annotates the event instead.
    chain.notices.append(f"{hook.name} objected: {reason}")
    chain.context.append(reason)


def _as_named_by(hook: HookSpec, target: str | None) -> str | None:
    """The tool or agent name as the hook's format names it (Claude's `Bash` for `shell`)."""
    return None if target is None else FORMATS[hook.format].match_name(target)


def _target(spec: EventSpec, payload: Mapping[str, Any]) -> str | None:
    if spec.match_on is MatchOn.TOOL:
        return str(payload.get("tool", ""))
    if spec.match_on is MatchOn.AGENT:
        return str(payload.get("agent", ""))
    return None


__all__ = ["HookEngine", "HookFailure", "Outcome"]
