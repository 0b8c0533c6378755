"""OpenTelemetry of one guarded turn: a real `hookgate -p` (scripted model, the example
rm -rf guard) exports to a loopback OTLP/HTTP receiver, which decodes what arrives
with the official protobuf definitions (`opentelemetry-proto`)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from runtime.project import Project

GUARD_REASON = "rm -rf is not allowed by this project"
SECRET_COMMAND = "rm -rf build/secret-name-4711"


class Receiver:
    """A loopback OTLP/HTTP collector: every POST body kept by path."""

    def __init__(self) -> None:
        self.bodies: list[tuple[str, bytes]] = []
        self.headers: list[dict[str, str]] = []
        received, headers = self.bodies, self.headers

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", 0))
                headers.append({name.lower(): value for name, value in self.headers.items()})
                received.append((self.path, self.rfile.read(size)))
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def raw(self) -> bytes:
        return b"".join(body for _, body in self.bodies)

    def spans(self) -> list[Any]:
        return [span for body in self._of("/v1/traces", ExportTraceServiceRequest)
                for rs in body.resource_spans for ss in rs.scope_spans for span in ss.spans]  # fmt: skip

    def metrics(self) -> dict[str, Any]:
        return {metric.name: metric for body in self._of("/v1/metrics", ExportMetricsServiceRequest)
                for rm in body.resource_metrics for sm in rm.scope_metrics for metric in sm.metrics}  # fmt: skip

    def logs(self) -> list[Any]:
        return [record for body in self._of("/v1/logs", ExportLogsServiceRequest)
                for rl in body.resource_logs for sl in rl.scope_logs for record in sl.log_records]  # fmt: skip

    def _of(self, path: str, message: Any) -> list[Any]:
        return [message.FromString(body) for at, body in self.bodies if at == path]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    thread = threading.Thread(target=made.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield made
    finally:
        made.server.shutdown()
        made.server.server_close()


def guarded_turn(project: Project, telemetry: dict[str, Any] | None, **env: str) -> None:
    (project.dir / "build").mkdir(exist_ok=True)
    guard = project.example("guard-rm-rf.sh")
    script = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": SECRET_COMMAND}}]},
        {"text": "done"},
    )
    hooks = {"preToolCall": [{"name": "no-rm-rf", "matcher": "^shell$", "command": guard,
                              "onError": "fail"}]}  # fmt: skip
    extra = {"telemetry": telemetry} if telemetry is not None else {}
    project.write_agent(script, yolo=True, sandbox={"mode": "off"}, hooks=hooks, **extra)
    done = project.hookgate("-p", "clean up", env=project.env(**env))
    assert done.returncode == 0, done.stderr
    assert (project.dir / "build").is_dir()


def attributes(item: Any) -> dict[str, Any]:
    return {kv.key: value_of(kv.value) for kv in item.attributes}


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "kvlist_value":
        return {kv.key: value_of(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def test_one_guarded_turn_exports_spans_metrics_and_log_records(
    project: Project, receiver: Receiver
) -> None:
    guarded_turn(project, {"otlp": receiver.url})

    (event,) = [s for s in receiver.spans() if s.name == "hookgate preToolCall"]
    assert attributes(event) | {"hookgate.hooks_run": 1} == {
        "hookgate.event": "preToolCall", "hookgate.decision": "blocked",
        "hookgate.hooks_run": 1, "hookgate.tool": "shell", "hookgate.blocked_by": "no-rm-rf",
    }  # fmt: skip
    (hook,) = [s for s in receiver.spans() if s.parent_span_id == event.span_id]
    assert hook.name == "hook no-rm-rf"
    assert hook.trace_id == event.trace_id
    assert event.start_time_unix_nano <= hook.start_time_unix_nano <= hook.end_time_unix_nano
    assert hook.end_time_unix_nano <= event.end_time_unix_nano
    hook_attributes = attributes(hook)
    assert hook_attributes["hookgate.hook.kind"] == "command"
    assert hook_attributes["hookgate.hook.outcome"] == "blocked"
    assert hook_attributes["hookgate.hook.timeout"] == 10.0
    assert isinstance(hook_attributes["hookgate.hook.exit_status"], int)

    metrics = receiver.metrics()
    (point,) = metrics["hookgate.decisions"].sum.data_points
    assert point.as_int == 1
    assert attributes(point) == {"hookgate.event": "preToolCall", "hookgate.decision": "blocked"}
    (histogram,) = metrics["hookgate.hook.duration"].histogram.data_points
    assert histogram.count == 1
    assert attributes(histogram)["hookgate.hook.name"] == "no-rm-rf"

    (record,) = receiver.logs()
    assert record.event_name == "hookgate.decision"
    assert value_of(record.body)["decision"] == "blocked"
    assert record.span_id == event.span_id  # the record belongs to the event's span


def test_no_content_leaves_by_default(project: Project, receiver: Receiver) -> None:
    guarded_turn(project, {"otlp": receiver.url})
    raw = receiver.raw()
    assert b"hookgate preToolCall" in raw  # the export arrived
    for text in (SECRET_COMMAND, "secret-name-4711", GUARD_REASON, "clean up"):
        assert text.encode() not in raw


def test_content_true_sends_the_payload_and_the_reason(
    project: Project, receiver: Receiver
) -> None:
    guarded_turn(project, {"otlp": receiver.url, "content": True})
    (event,) = [s for s in receiver.spans() if s.name == "hookgate preToolCall"]
    assert SECRET_COMMAND in attributes(event)["hookgate.payload"]
    assert GUARD_REASON in attributes(event)["hookgate.reason"]


#: An AWS access key id, as the examples' redactor and scrubber know one.
AWS_KEY = "AKIAQWERTYUIOPASDFGH"


def test_content_true_exports_no_blocked_question(project: Project, receiver: Receiver) -> None:
    """A question a hook blocked for holding a key appears nowhere afterwards: not in
    the history, and not in what the collector gets."""
    hooks = {"preGeneration": [{"name": "redact", "command": project.example("redact_prompt.py")}]}
    project.write_agent(project.script({"text": "done"}), hooks=hooks,
                        telemetry={"otlp": receiver.url, "content": True})  # fmt: skip

    done = project.hookgate("-p", f"deploy with {AWS_KEY} please")

    assert done.returncode == 2  # blocked
    (event,) = [s for s in receiver.spans() if s.name == "hookgate preGeneration"]
    exported = attributes(event)["hookgate.payload"]
    assert "[prompt blocked by a hook: the question holds an AWS access key id]" in exported
    assert AWS_KEY.encode() not in receiver.raw()


def test_content_true_exports_no_stopped_question(project: Project, receiver: Receiver) -> None:
    """A hook that stops the turn (Claude's `continue: false`) keeps the question from
    the model as a block does; its text does not leave for the collector either."""
    stopper = project.dir / "stop_on_key.py"
    stopper.write_text(
        "import json, sys\n"
        "stop = 'AKIA' in json.load(sys.stdin).get('prompt', '')\n"
        "print(json.dumps({'continue': False, 'stopReason': 'a key'} if stop else {}))\n"
    )
    hooks = {"preGeneration": [{"name": "stopper", "format": "claude",
                                "command": f"python3 {stopper}"}]}  # fmt: skip
    project.write_agent(project.script({"text": "done"}), hooks=hooks,
                        telemetry={"otlp": receiver.url, "content": True})  # fmt: skip

    done = project.hookgate("-p", f"deploy with {AWS_KEY} please")

    assert done.returncode != 0
    (event,) = [s for s in receiver.spans() if s.name == "hookgate preGeneration"]
    assert "[prompt blocked by a hook: a key]" in attributes(event)["hookgate.payload"]
    assert AWS_KEY.encode() not in receiver.raw()


def test_content_true_exports_what_the_hooks_left(project: Project, receiver: Receiver) -> None:
    """A result a hook scrubbed is exported scrubbed, as the model read it."""
    hooks = {"postToolCall": [{"name": "scrub", "command": project.example("scrub_aws_keys.py")}]}
    made = f"printf 'aws_access_key_id = %s%s' {AWS_KEY[:4]} {AWS_KEY[4:]}"  # not in the call
    call = {"name": "shell", "arguments": {"command": made}}
    project.write_agent(project.script({"tool_calls": [call]}, {"text": "done"}), yolo=True,
                        hooks=hooks, telemetry={"otlp": receiver.url, "content": True})  # fmt: skip

    done = project.hookgate("-p", "show me")

    assert done.returncode == 0, done.stderr
    (event,) = [s for s in receiver.spans() if s.name == "hookgate postToolCall"]
    assert "[REDACTED_KEY]" in attributes(event)["hookgate.payload"]
    assert AWS_KEY.encode() not in receiver.raw()


def test_the_standard_otel_variable_turns_it_on(project: Project, receiver: Receiver) -> None:
    guarded_turn(project, None, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
    assert [s.name for s in receiver.spans()] == ["hook no-rm-rf", "hookgate preToolCall"]


TOKEN = "Bearer collector-token-5a1e"


@pytest.mark.parametrize("named_by", ["the agent file", "the environment"])
def test_the_environments_collector_headers_go_to_the_environments_collector_alone(
    project: Project, receiver: Receiver, named_by: str
) -> None:
    """`OTEL_EXPORTER_OTLP_HEADERS` holds the user's collector's credentials: the SDK
    adds it to every export, so a URL a cloned repository's agent file names got it."""
    if named_by == "the agent file":
        guarded_turn(
            project, {"otlp": receiver.url}, OTEL_EXPORTER_OTLP_HEADERS=f"authorization={TOKEN}"
        )
    else:
        guarded_turn(project, None, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
                     OTEL_EXPORTER_OTLP_HEADERS=f"authorization={TOKEN}")  # fmt: skip

    assert receiver.headers  # the exports arrived
    sent = {headers.get("authorization") for headers in receiver.headers}
    assert sent == ({None} if named_by == "the agent file" else {TOKEN})
    assert {headers["content-type"] for headers in receiver.headers} == {"application/x-protobuf"}


def test_without_telemetry_nothing_is_sent(project: Project, receiver: Receiver) -> None:
    guarded_turn(project, None)
    assert receiver.bodies == []


@pytest.mark.parametrize(
    ("telemetry", "message"),
    [
        ({"otlp": "localhost:4318"}, "expected the collector's http:// or https:// URL"),
        ({"otlp": "http://x", "contents": True}, "contents"),
        ({"content": "yes"}, "expected true or false"),
    ],
)
def test_a_wrong_telemetry_key_names_file_line_and_value(
    project: Project, telemetry: dict[str, Any], message: str
) -> None:
    project.write_agent(project.script({"text": "hi"}), telemetry=telemetry)
    done = project.hookgate("-p", "hi")
    assert done.returncode == 1
    assert message in done.stderr
    assert "hookgate.yaml" in done.stderr
    assert "telemetry" in done.stderr


def test_hookgate_hook_exports_the_other_agents_decisions(
    project: Project, receiver: Receiver
) -> None:
    guard = project.example("guard-rm-rf.sh")
    hooks = {"preToolCall": [{"name": "no-rm-rf", "matcher": "^shell$", "command": guard}]}
    project.agent_file.write_text(json.dumps({"hooks": hooks, "telemetry": {"otlp": receiver.url}}))
    project.trust()
    event = {"session_id": "c-1", "cwd": str(project.dir), "hook_event_name": "PreToolUse",
             "tool_name": "Bash", "tool_input": {"command": SECRET_COMMAND}, "tool_use_id": "t1"}  # fmt: skip
    done = project.hookgate("hook", "claude", stdin=json.dumps(event), trusted=False)
    assert done.returncode == 0, done.stderr
    assert GUARD_REASON in done.stdout
    (span,) = [s for s in receiver.spans() if s.name == "hookgate preToolCall"]
    assert attributes(span)["hookgate.decision"] == "blocked"
    assert SECRET_COMMAND.encode() not in receiver.raw()
