"""Run an event's hooks in order and fold their replies into one `Outcome`.

The engine matches an event's hooks, builds what each reads (the envelope, its
environment) and asks each in the way of its kind: a Python callable, a process, a
persistent process, an http endpoint, a model. A failing hook never raises out of
here: `chain.Chain` folds replies and failures into the event's `Outcome`, and
`replies.py` says what a hook's answer or failure was.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import cached_property
from pathlib import Path

from hookgate.hooks.chain import Chain
from hookgate.hooks.config import HooksConfig, HookSpec
from hookgate.hooks.errors import ConfigError
from hookgate.hooks.events import EVENT_NAMES, EVENTS, OnError
from hookgate.hooks.files.yamlfile import did_you_mean
from hookgate.hooks.formats import FORMATS, HookReply, ReplyFormat
from hookgate.hooks.loop import needs_loop
from hookgate.hooks.outcome import HookFailure, Outcome
from hookgate.hooks.process import (
    DEFAULT_PIPE_SIZE,
    HOLD_WAIT,
    PIPE_SIZE,
    QUICK,
    SLOW_RUNS,
    ProcessResult,
    programs_path,
    run_process_sync,
    runs_since_quick,
)
from hookgate.hooks.process.guard import guarded, is_guarded
from hookgate.hooks.replies import failure, process_reply, python_reply
from hookgate.hooks.runs import bytecode
from hookgate.hooks.steps import (
    as_named_by,
    await_alone,
    call_python,
    event_input,
    http_request,
    matched_field,
    resident_input,
    run_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # each kind's module is imported by the first hook of that kind
    from typing import Any

    from hookgate.hooks.kinds.http.run import HttpPool
    from hookgate.hooks.kinds.model.run import ModelChecks
    from hookgate.hooks.kinds.persistent.run import PersistentHooks
    from hookgate.hooks.observe import EventObserver, HookRun
    from hookgate.hooks.runs.pins import SessionPins


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
    `pinned` (absolute path → sha256 hex, as trusted at session start), a hook runs
    only while every file it runs (`whatruns`) has its pinned digest; one that
    changed blocks the event, whatever the hook's `onError`. A hook runs in its `cwd`,
    else in the directory of the file that declares it (`config.source`), where its
    relative paths start, as trust read them. http hooks share pooled connections that
    `await engine.aclose()` (or `engine.close()` after `run_sync` alone) closes.
    An `observer` (`observe.EventObserver`) is told of each event's hook runs.
    A long-lived caller that makes an engine per event (`hookgate serve`) passes the
    parts it keeps across them: `pins` (a `SessionPins`, in place of `pinned`) and
    `persistent` (its persistent hooks' processes, which it stops: `close` leaves them).
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
        observer: EventObserver | None = None,
        env_file: str | None = None,
        pins: SessionPins | None = None,
        persistent: PersistentHooks | None = None,
    ) -> None:
        self.session_id = session_id
        self.observer = observer
        #: `$CLAUDE_ENV_FILE` of the sessionStart hooks (`hookgate.runtime.envfile`), if any.
        self.env_file = env_file
        self.transcript_path = transcript_path
        self.project_dir = os.path.abspath(project_dir or os.getcwd())
        self.asked_depth = asked_depth
        self.permission_mode = permission_mode
        self.asked_agent = asked_agent
        #: Where the hooks' relative paths start: the directory of their config file
        #: (the project directory for hooks made in code).
        self.base_dir = (
            os.path.dirname(os.path.abspath(config.source))
            if config is not None and os.path.isfile(config.source)
            else self.project_dir
        )
        hooks = {event: list(specs) for event, specs in (config.hooks if config else {}).items()}
        for spec in extra:
            hooks.setdefault(spec.event.name, []).append(spec)
        self._hooks: dict[str, tuple[HookSpec, ...]] = {e: tuple(s) for e, s in hooks.items() if s}
        #: The events whose hooks have no matcher: every one runs on every call.
        self._match_all = {e for e, s in self._hooks.items() if all(h.matcher is None for h in s)}
        base_env = dict(os.environ if environ is None else environ)
        if "PATH" in base_env:  # (the project itself: the caller's to take out)
            base_env["PATH"] = programs_path(base_env["PATH"])
        self._environ = base_env
        self._env = {id(spec): self._hook_env(spec, base_env) for spec in self}
        #: Each process hook's runs since its last within `QUICK` (`process.pace`): it
        #: is quick, and held for under `await run`, while below `SLOW_RUNS`.
        self._slow_runs: dict[int, int] = {}
        #: The process hooks that once wrote a pipe's worth to stdout: asked for a larger
        #: pipe from then on (`_learn`).
        self._chatty: set[int] = set()
        self._pins: SessionPins | None = pins
        #: Persistent hooks the caller keeps (and stops); `_persistent` uses them.
        self._kept_persistent = persistent
        if pinned is not None:
            from hookgate.hooks.runs.pins import SessionPins

            self._pins = SessionPins(pinned, Path(self.base_dir))

    # The http pool, the checkers and the persistent hooks are made (and their modules
    # imported) by the first hook that needs them: a start-up pays for the kinds it runs.
    @cached_property
    def _http(self) -> HttpPool:
        from hookgate.hooks.kinds.http.run import HttpPool

        return HttpPool()

    @cached_property
    def checks(self) -> ModelChecks:
        """The model hooks' checker clients and verdict cache (`checks.calls` counts calls)."""
        from hookgate.hooks.kinds.model.run import ModelChecks

        return ModelChecks(self._environ)

    @cached_property
    def _persistent(self) -> PersistentHooks:
        if self._kept_persistent is not None:
            return self._kept_persistent
        from hookgate.hooks.kinds.persistent.run import PersistentHooks

        return PersistentHooks()

    @cached_property
    def _run_process(self) -> Callable[..., Awaitable[ProcessResult]]:
        """The event-loop driver's `run_process`, looked up once (an import statement
        costs a microsecond on every hook)."""
        from hookgate.hooks.process.aio import run_process

        return run_process

    def _made(self, name: str) -> Any:
        """The part `name` if a hook made it, else None: closing makes none (nor
        stops the persistent hooks a caller keeps)."""
        made = self.__dict__.get(name)
        return None if made is not None and made is self._kept_persistent else made

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
        chain = Chain(EVENTS[name], dict(payload))
        runs: list[HookRun] | None = [] if self.observer is not None else None
        started = time.time_ns() if runs is not None else 0  # for the observer alone
        for hook in hooks:
            if self._pins is not None and self._tampered(hook, chain):
                break
            began, error = (time.time_ns() if runs is not None else 0), None
            try:
                reply = await self._ask(hook, chain)
            except Exception as exc:
                chain.fail(hook, failure(hook, exc))
                error = exc
            else:
                chain.apply(hook, reply)
            if runs is not None:
                runs.append(run_of(hook, chain, began, error))
            if chain.over():
                break
        return self._decided(payload, chain, runs, started)

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
        chain = Chain(EVENTS[name], dict(payload))
        runs: list[HookRun] | None = [] if self.observer is not None else None
        started = time.time_ns() if runs is not None else 0  # for the observer alone
        for hook in hooks:
            if self._pins is not None and self._tampered(hook, chain):
                break
            began, error = (time.time_ns() if runs is not None else 0), None
            try:
                reply = self._ask_sync(hook, chain)
            except Exception as exc:
                chain.fail(hook, failure(hook, exc))
                error = exc
            else:
                chain.apply(hook, reply)
            if runs is not None:
                runs.append(run_of(hook, chain, began, error))
            if chain.over():
                break
        return self._decided(payload, chain, runs, started)

    def _decided(
        self, payload: Mapping[str, Any], chain: Chain, runs: list[HookRun] | None, started: int
    ) -> Outcome:
        """The chain's outcome, of which the observer (if any) is told."""
        outcome = chain.outcome()
        if runs is not None and self.observer is not None:
            self.observer.event_decided(chain.spec.name, payload, outcome, runs, started)
        return outcome

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
        if not skip and name in self._match_all:
            return name, list(hooks)
        target = matched_field(EVENTS[name], payload)
        skipped = {id(hook) for hook in skip}
        return name, [
            hook
            for hook in hooks
            if id(hook) not in skipped
            and (hook.matcher is None or hook.matches(as_named_by(hook, target)))
        ]

    async def _ask(self, hook: HookSpec, chain: Chain) -> HookReply:
        chain.hooks_run += 1
        envelope = self._envelope(chain)
        # asyncio and the event-loop driver are imported where each is used, on a path
        # that runs on a loop (already loaded there): a synchronous embedder (`run_sync`,
        # `hooks fire`) never imports them, and a Python, http, model or persistent hook
        # does not look the driver up on every event.
        if hook.function is not None:
            answer = call_python(hook, envelope)
            if isinstance(answer, Awaitable):
                await needs_loop()
                import asyncio

                async with asyncio.timeout(hook.timeout):
                    answer = await answer
            return python_reply(chain.spec, envelope, answer)
        await needs_loop()  # every other kind waits on a process or a connection
        if hook.model is not None:
            return await self.checks.verdict(hook.model, chain.spec.name, envelope, hook.timeout)
        fmt = FORMATS[hook.format]
        if hook.http is not None:
            from hookgate.hooks.kinds.http.run import post_event

            result = await post_event(
                self._http.async_client(), http_request(hook, fmt, chain, envelope, self._environ)
            )
        elif hook.persistent:
            result = await self._persistent.ask(
                hook, resident_input(fmt, chain, envelope), env=self._env[id(hook)],
                cwd=hook.cwd or self.base_dir,
            )  # fmt: skip
        else:
            # A quick hook (`process.pace`) is waited for with the loop held, which
            # costs less than the loop's own wake-up (`HOLD_WAIT` at most).
            slow_runs = self._slow_runs.get(id(hook), SLOW_RUNS)
            hold = HOLD_WAIT if slow_runs < SLOW_RUNS else 0.0
            result = await self._run_process(
                hook.argv(), hold=hold, **self._process_options(hook, fmt, chain, envelope)
            )
            self._slow_runs[id(hook)] = (
                0  # quick, the usual run: `runs_since_quick` says so too
                if result.duration <= QUICK
                else runs_since_quick(slow_runs, result.duration, held=hold, quick=QUICK)
            )
            self._learn(hook, result)
        chain.exit_status = result.returncode
        return process_reply(fmt, chain.spec, envelope, result)

    def _ask_sync(self, hook: HookSpec, chain: Chain) -> HookReply:
        chain.hooks_run += 1
        envelope = self._envelope(chain)
        if hook.function is not None:
            answer = call_python(hook, envelope)
            if isinstance(answer, Awaitable):
                answer = await_alone(answer, hook.timeout)
            return python_reply(chain.spec, envelope, answer)
        if hook.model is not None:
            verdict = self.checks.verdict_closing(
                hook.model, chain.spec.name, envelope, hook.timeout
            )
            return await_alone(verdict, hook.timeout)  # type: ignore[no-any-return]
        fmt = FORMATS[hook.format]
        if hook.http is not None:
            result = self._http.post_sync(http_request(hook, fmt, chain, envelope, self._environ))
        elif hook.persistent:
            result = self._persistent.ask_sync(
                hook, resident_input(fmt, chain, envelope), env=self._env[id(hook)],
                cwd=hook.cwd or self.base_dir,
            )  # fmt: skip
        else:
            result = run_process_sync(
                hook.argv(), **self._process_options(hook, fmt, chain, envelope)
            )
            self._learn(hook, result)
        chain.exit_status = result.returncode
        return process_reply(fmt, chain.spec, envelope, result)

    def _tampered(self, hook: HookSpec, chain: Chain) -> bool:
        """Whether a file `hook` runs changed since trust: then it does not run, and the
        event is blocked as under `onError: fail`, whatever its own `onError` says (a
        guard the model rewrote must not let the call through with a notice). Asked
        only where files are pinned."""
        if self._pins is None or (changed := self._pins.changed(hook)) is None:
            return False
        chain.hooks_run += 1
        chain.notices.append(f"hook {hook.name!r} ({chain.spec.name}) blocks: {changed}")
        chain.fail(hook._replace(on_error=OnError.FAIL), changed)
        return True

    def _process_options(
        self, hook: HookSpec, fmt: ReplyFormat, chain: Chain, envelope: dict[str, Any]
    ) -> dict[str, Any]:
        """How a process hook runs: everything but its command line."""
        return {
            "stdin": lambda: event_input(fmt, chain, envelope),  # encoded while it starts
            "env": self._guarded_env(hook),
            "cwd": hook.cwd or self.base_dir,
            "timeout": hook.timeout,
            "pipe_size": PIPE_SIZE if id(hook) in self._chatty else None,
        }

    def _learn(self, hook: HookSpec, result: ProcessResult) -> None:
        """A hook whose reply filled a default pipe gets a `PIPE_SIZE` one from its next
        run on, where the reply waits until the hook has exited: with the default, it
        waited for the drain, `QUIET_START` after the start. Most replies are short,
        and spare the resize."""
        if len(result.stdout) >= DEFAULT_PIPE_SIZE:
            self._chatty.add(id(hook))

    def _guarded_env(self, hook: HookSpec) -> dict[str, str]:
        """The hook's environment, marked for the guardian once, at its first run (and
        again in a forked child): not copied to be marked at each run."""
        env = self._env[id(hook)]
        if not is_guarded(env):
            env = self._env[id(hook)] = guarded(env)
        return env

    def _envelope(self, chain: Chain) -> dict[str, Any]:
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

    def _hook_env(self, hook: HookSpec, base: Mapping[str, str]) -> dict[str, str]:
        # `$CLAUDE_PROJECT_DIR` is where the settings' `.claude/` lives, as trust read it.
        env = {
            **base,
            **bytecode.environment(),
            **FORMATS[hook.format].environment(self.base_dir),
            **hook.env,
        }
        env.update(
            HOOKGATE_EVENT=hook.event.name,
            HOOKGATE_HOOK_NAME=hook.name,
            HOOKGATE_SESSION_ID=self.session_id,
            HOOKGATE_PROJECT_DIR=self.project_dir,
            HOOKGATE_ASKED_DEPTH=str(self.asked_depth),
        )
        if self.env_file is not None and hook.event.name == "sessionStart":
            env["CLAUDE_ENV_FILE"] = self.env_file
        return env


__all__ = ["HookEngine", "HookFailure", "Outcome"]
