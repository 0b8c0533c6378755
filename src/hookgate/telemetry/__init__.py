"""OpenTelemetry for every decision: off unless the agent file or the environment asks.

`parse_telemetry` reads the agent file's `telemetry:` key; `observer_for` answers the
engine's observer (`hooks.observe.EventObserver`) that exports spans, metrics and log
records over OTLP/HTTP (`otlp.py`, the `hookgate[otel]` extra), or None where
telemetry is off. Off, nothing of OpenTelemetry is imported.
"""

from __future__ import annotations

from collections.abc import Mapping

from hookgate.hooks.files.yamlfile import Where, check_keys, describe, expect_mapping
from hookgate.hooks.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hookgate.hooks.observe import EventObserver

TELEMETRY_KEYS = ("otlp", "content")
#: The standard variables that turn the OTLP export on without a `telemetry:` key.
ENDPOINT_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
)


class TelemetrySettings(NamedTuple):
    """`telemetry:` of the agent file."""

    otlp: str | None = None
    """The collector's OTLP/HTTP base URL (`/v1/traces`, … are added)."""
    content: bool = False
    """Whether prompts, arguments, results and reasons leave with the telemetry."""


def parse_telemetry(node: Any, at: Where) -> TelemetrySettings:
    """Validate `telemetry:` found at `at`."""
    value = expect_mapping(node, at, "a mapping with otlp, content")
    check_keys(value, at, TELEMETRY_KEYS)
    otlp = value.get("otlp")
    if otlp is not None and (
        not isinstance(otlp, str) or not otlp.startswith(("http://", "https://"))
    ):
        raise at.key(value, "otlp").error(
            f"expected the collector's http:// or https:// URL, got {describe(otlp)}",
            hint="telemetry: {otlp: http://localhost:4318}",
        )
    content = value.get("content", False)
    if not isinstance(content, bool):
        raise at.key(value, "content").error(f"expected true or false, got {describe(content)}")
    return TelemetrySettings(otlp=otlp.rstrip("/") if otlp else None, content=content)


def observer_for(
    settings: TelemetrySettings | None, environ: Mapping[str, str], service: str = "hookgate"
) -> EventObserver | None:
    """The exporting observer, or None where neither `settings` nor the `OTEL_*`
    variables turn telemetry on (`OTEL_SDK_DISABLED=true` turns it off)."""
    settings = settings or TelemetrySettings()
    if environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return None
    if settings.otlp is None and not any(environ.get(name) for name in ENDPOINT_VARIABLES):
        return None
    from hookgate.telemetry.otlp import exporting_observer

    return exporting_observer(settings, service)
