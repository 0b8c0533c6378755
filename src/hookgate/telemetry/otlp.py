"""The OpenTelemetry observer: each event a span with a child per hook run, a decision
counter, a hook-duration histogram and the audit record as a log record, exported over
OTLP/HTTP by the official SDK.

The providers are made once per process and per endpoint (every engine of the process
shares them) and flushed at exit by the SDK. They are never installed as the global
providers: an embedding application keeps its own. An endpoint the agent file names
gets no header or credential of the environment's (`_ProtocolHeadersOnly`). Without
`content`, no prompt, argument, result or reason leaves: only names, kinds, outcomes,
times and counts.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import requests
from opentelemetry import trace
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from hookgate.hooks import Outcome
from hookgate.hooks.observe import HookRun, hook_kind
from hookgate.hooks.wording import BLOCKED_MARKER
from hookgate.telemetry import TelemetrySettings

#: The instrumentation scope every span, metric and log record carries.
SCOPE = "hookgate"
_PROVIDERS: dict[tuple[str | None, str], _Providers] = {}
_LOCK = threading.Lock()


#: What an agent file's collector is sent of each export's headers: the protocol's own.
_PROTOCOL_HEADERS = frozenset(
    {"content-type", "content-encoding", "content-length", "user-agent", "accept",
     "accept-encoding", "connection"}
)  # fmt: skip


class _ProtocolHeadersOnly(requests.Session):
    """The session of an exporter whose endpoint the agent file names: it sends the
    protocol's headers alone. The SDK adds `OTEL_EXPORTER_OTLP_HEADERS` (the user's
    collector's credentials) to every exporter, whatever endpoint it is given, and a
    credential provider the environment names; those belong to the collector the
    environment names, never to a URL a cloned repository wrote."""

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        for name in [name for name in request.headers if name.lower() not in _PROTOCOL_HEADERS]:
            del request.headers[name]
        return super().send(request, **kwargs)


class _Providers:
    """One process's tracer, meter and logger providers for one endpoint."""

    def __init__(self, endpoint: str | None, service: str) -> None:
        def at(path: str) -> dict[str, Any]:  # None: the exporter reads OTEL_EXPORTER_OTLP_*
            if endpoint is None:
                return {}
            return {"endpoint": f"{endpoint}/v1/{path}", "session": _ProtocolHeadersOnly()}

        resource = Resource.create({"service.name": service})
        self.tracing = TracerProvider(resource=resource)
        self.tracing.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(**at("traces"))))
        reader = PeriodicExportingMetricReader(OTLPMetricExporter(**at("metrics")))
        self.metering = MeterProvider(metric_readers=[reader], resource=resource)
        self.logging = LoggerProvider(resource=resource)
        self.logging.add_log_record_processor(
            BatchLogRecordProcessor(OTLPLogExporter(**at("logs")))
        )
        meter = self.metering.get_meter(SCOPE)
        self.decisions = meter.create_counter(
            "hookgate.decisions", unit="{decision}", description="events decided by hooks"
        )
        self.durations = meter.create_histogram(
            "hookgate.hook.duration", unit="s", description="how long each hook run took"
        )
        self.tracer = self.tracing.get_tracer(SCOPE)
        self.logger = self.logging.get_logger(SCOPE)


def exporting_observer(settings: TelemetrySettings, service: str) -> OtlpObserver:
    """The observer exporting to `settings.otlp` (or where `OTEL_*` say)."""
    key = (settings.otlp, service)
    with _LOCK:
        providers = _PROVIDERS.get(key)
        if providers is None:
            providers = _PROVIDERS[key] = _Providers(settings.otlp, service)
    return OtlpObserver(providers, content=settings.content)


class OtlpObserver:
    """An `EventObserver` that records through `_Providers`."""

    def __init__(self, providers: _Providers, *, content: bool) -> None:
        self._providers = providers
        self._content = content

    def event_decided(
        self,
        event: str,
        payload: Mapping[str, Any],
        outcome: Outcome,
        runs: Sequence[HookRun],
        started_ns: int,
    ) -> None:
        try:
            self._record_decision(event, payload, outcome, runs, started_ns)
        except Exception:  # telemetry never changes a decision
            return

    def _record_decision(
        self,
        event: str,
        payload: Mapping[str, Any],
        outcome: Outcome,
        runs: Sequence[HookRun],
        started_ns: int,
    ) -> None:
        p = self._providers
        decision = decision_of(outcome)
        attributes: dict[str, Any] = {"hookgate.event": event, "hookgate.decision": decision,
                      "hookgate.hooks_run": outcome.hooks_run}  # fmt: skip
        if "tool" in payload:
            attributes["hookgate.tool"] = str(payload["tool"])
        if outcome.blocked_by:
            attributes["hookgate.blocked_by"] = outcome.blocked_by
        if self._content:
            shown = exported_payload(event, outcome)
            attributes["hookgate.payload"] = json.dumps(shown, ensure_ascii=False, default=str)
            if outcome.reason:
                attributes["hookgate.reason"] = outcome.reason
        ended = max([started_ns, *(r.started_ns + r.duration_ns for r in runs)])
        span = p.tracer.start_span(
            f"hookgate {event}", start_time=started_ns, attributes=attributes
        )
        parent = trace.set_span_in_context(span)
        for run in runs:
            hook_attributes = _run_attributes(event, run)
            child = p.tracer.start_span(f"hook {run.hook.name}", context=parent,
                                        start_time=run.started_ns, attributes=hook_attributes)  # fmt: skip
            child.end(end_time=run.started_ns + run.duration_ns)
            p.durations.record(run.duration_ns / 1e9, {k: v for k, v in hook_attributes.items()
                                                       if k != "hookgate.hook.exit_status"})  # fmt: skip
        span.end(end_time=ended)
        p.decisions.add(1, {"hookgate.event": event, "hookgate.decision": decision})
        body: dict[str, Any] = {k.removeprefix("hookgate."): v for k, v in attributes.items()}
        p.logger.emit(timestamp=ended, context=parent, severity_number=_SEVERITY[decision],
                      severity_text=decision, body=body, event_name="hookgate.decision",
                      attributes=attributes)  # fmt: skip


#: The fields of a blocked event that carry what the block kept from going on: a
#: question blocked before the model (or the asked agent) read it.
WITHHELD_WHEN_BLOCKED = {"preGeneration": ("prompt",), "preAsk": ("question", "conversation")}


def exported_payload(event: str, outcome: Outcome) -> dict[str, Any]:
    """What `content: true` exports of an event: its payload as the hooks left it (a
    result a hook scrubbed, scrubbed: what the model read), and of a question a hook
    blocked or stopped only the marker the history keeps, so that a secret it held
    appears nowhere."""
    shown = dict(outcome.payload)
    if outcome.halted:
        reason = outcome.halt_reason or ""
        for field in WITHHELD_WHEN_BLOCKED.get(event, ()):
            if field in shown:
                shown[field] = BLOCKED_MARKER.format(reason=reason)
    return shown


def decision_of(outcome: Outcome) -> str:
    """`blocked`, `stopped`, `failed` (a hook failed, the event went on) or `allowed`."""
    if outcome.blocked:
        return "blocked"
    if outcome.stop_reason is not None:
        return "stopped"
    return "failed" if outcome.errors else "allowed"


_SEVERITY = {"blocked": SeverityNumber.WARN, "stopped": SeverityNumber.WARN,
             "failed": SeverityNumber.ERROR, "allowed": SeverityNumber.INFO}  # fmt: skip


def _run_attributes(event: str, run: HookRun) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "hookgate.event": event, "hookgate.hook.name": run.hook.name,
        "hookgate.hook.kind": hook_kind(run.hook), "hookgate.hook.outcome": run.outcome,
        "hookgate.hook.timeout": run.hook.timeout,
    }  # fmt: skip
    if run.exit_status is not None:
        attributes["hookgate.hook.exit_status"] = run.exit_status
    return attributes
