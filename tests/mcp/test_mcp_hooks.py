"""MCP tools pass the same wrapper as built-in ones: hooks, permission rules, consent.

Each test runs a real MCP server process (the SDK-built test server, over stdio or
streamable HTTP) under an agent whose model is scripted; what reached the server is
read from the file its `record` tool appends to.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.consent import AlwaysAllow
from hookgate.runtime.toolcall import NOT_ASKED_RESULT
from hookgate.runtime.turn import Answered, run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView, read_log
from support.mcp_peers import stdio_server

pytestmark = pytest.mark.anyio


def reply_hook(project: Project, name: str, reply: dict[str, Any]) -> str:
    """A hook command that answers `reply` whatever it reads."""
    quoted = "'" + json.dumps(reply).replace("'", "'\"'\"'") + "'"
    return project.hook(name, f"cat >/dev/null; echo {quoted}")


def recorded(server_log: Path) -> list[str]:
    """The texts the server's `record` tool received, in order."""
    return server_log.read_text().splitlines() if server_log.exists() else []


def record_call(text: str = "hello") -> dict[str, Any]:
    return {"tool_calls": [{"name": "mcp__test__record", "arguments": {"text": text}}]}


def servers(server_log: Path, **settings: Any) -> dict[str, Any]:
    return {"test": stdio_server(env={"MCP_TEST_LOG": str(server_log)}, **settings)}


async def test_mcp_tool_is_offered_by_its_name_and_runs_through_the_hooks(
    project: Project, open_project_agent: OpenAgent, server_log: Path, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    model = project.script(record_call(), {"expect": "recorded: hello", "text": "Done."})
    project.write_agent(
        model,
        yolo=True,
        mcp_servers=servers(server_log),
        hooks={
            "preToolCall": [{"matcher": "^mcp__test__", **project.recorder(log)}],
            "postToolCall": [project.recorder(log)],
        },
    )
    agent = await open_project_agent()
    view = RecordingView()

    outcome = await run_turn(agent, "record hello", view)

    assert outcome == Answered("Done.")
    assert "mcp__test__record" in agent.gate.tools.names()
    assert recorded(server_log) == ["hello"]
    pre, post = read_log(log)
    assert (pre["event"], pre["tool"], pre["arguments"]) == (
        "preToolCall",
        "mcp__test__record",
        {"text": "hello"},
    )
    assert post["result"] == {"content": "recorded: hello", "is_error": False}
    assert [result.content for _, result in view.finished] == ["recorded: hello"]


async def test_hook_denies_an_mcp_call_before_it_reaches_the_server(
    project: Project, open_project_agent: OpenAgent, server_log: Path
) -> None:
    deny = {"action": "deny", "reason": "no recording"}
    model = project.script(
        record_call(), {"expect": "[denied by a hook: no recording]", "text": "Denied."}
    )
    project.write_agent(
        model,
        yolo=True,
        mcp_servers=servers(server_log),
        hooks={
            "preToolCall": [{"matcher": "^mcp__test__", "command": reply_hook(project, "d", deny)}]
        },
    )
    agent = await open_project_agent()

    outcome = await run_turn(agent, "record hello", RecordingView())

    assert outcome == Answered("Denied.")
    assert recorded(server_log) == []


async def test_hook_rewrites_the_arguments_the_server_receives(
    project: Project, open_project_agent: OpenAgent, server_log: Path
) -> None:
    rewrite = {"arguments": {"text": "[redacted]"}}
    model = project.script(
        record_call("secret-token"), {"expect": "recorded: [redacted]", "text": "Done."}
    )
    project.write_agent(
        model,
        yolo=True,
        mcp_servers=servers(server_log),
        hooks={"preToolCall": [{"command": reply_hook(project, "r", rewrite)}]},
    )
    agent = await open_project_agent()

    await run_turn(agent, "record it", RecordingView())

    assert recorded(server_log) == ["[redacted]"]
    # The history keeps what the model asked for; the server got the hook's arguments.
    (call,) = agent.history.messages[1].tool_calls
    assert call.arguments == {"text": "secret-token"}


async def test_hook_replaces_the_result_the_model_reads(
    project: Project, open_project_agent: OpenAgent, server_log: Path
) -> None:
    replace = {"result": "nothing to see"}
    model = project.script(record_call(), {"expect": "nothing to see", "text": "Done."})
    project.write_agent(
        model,
        yolo=True,
        mcp_servers=servers(server_log),
        hooks={
            "postToolCall": [{"matcher": "^mcp__", "command": reply_hook(project, "p", replace)}]
        },
    )
    agent = await open_project_agent()
    view = RecordingView()

    outcome = await run_turn(agent, "record", view)

    assert outcome == Answered("Done.")
    assert recorded(server_log) == ["hello"]  # the call ran; only its result changed
    assert [result.content for _, result in view.finished] == ["nothing to see"]
    assert "the result of mcp__test__record was replaced by a hook" in view.notices


async def test_mcp_call_asks_for_consent_unless_an_allow_rule_names_it(
    project: Project, open_project_agent: OpenAgent, server_log: Path
) -> None:
    model = project.script(
        record_call("one"),
        {"expect": NOT_ASKED_RESULT, "text": "Not allowed."},
        record_call("two"),
        {"expect": "recorded: two", "text": "Recorded."},
    )
    project.write_agent(model, mcp_servers=servers(server_log))
    agent = await open_project_agent()  # consent: deny everything

    assert await run_turn(agent, "first", RecordingView()) == Answered("Not allowed.")
    assert recorded(server_log) == []

    project.write_agent(
        project.script(record_call("two"), {"expect": "recorded: two", "text": "Recorded."}),
        mcp_servers=servers(server_log),
        permissions={"allow": ["mcp__test__*"]},
    )
    allowed = await open_project_agent()
    assert await run_turn(allowed, "second", RecordingView()) == Answered("Recorded.")
    assert recorded(server_log) == ["two"]


async def test_deny_rule_on_a_server_stops_its_calls_even_with_yolo(
    project: Project, open_project_agent: OpenAgent, server_log: Path
) -> None:
    model = project.script(
        record_call(), {"expect": "denied by the permission rule 'mcp__test__*'", "text": "No."}
    )
    project.write_agent(
        model, yolo=True, mcp_servers=servers(server_log), permissions={"deny": ["mcp__test__*"]}
    )
    agent = await open_project_agent(consent=AlwaysAllow())

    assert await run_turn(agent, "record", RecordingView()) == Answered("No.")
    assert recorded(server_log) == []


async def test_hooks_guard_calls_to_a_streamable_http_server(
    project: Project, open_project_agent: OpenAgent, server_log: Path, http_server: str
) -> None:
    rewrite = {"arguments": {"text": "over http, rewritten"}}
    model = project.script(
        record_call("over http"), {"expect": "recorded: over http, rewritten", "text": "Done."}
    )
    project.write_agent(
        model,
        yolo=True,
        mcp_servers={"test": {"url": http_server, "headers": {"X-Test": "1"}, "timeout": 10}},
        hooks={
            "preToolCall": [
                {"matcher": "^mcp__test__record$", "command": reply_hook(project, "h", rewrite)}
            ]
        },
    )
    agent = await open_project_agent()

    assert await run_turn(agent, "record over http", RecordingView()) == Answered("Done.")
    assert recorded(server_log) == ["over http, rewritten"]


#: The published server from PyPI (the `dev` extra installs it).
MCP_SERVER_TIME = Path(sys.executable).with_name("mcp-server-time")


@pytest.mark.skipif(not MCP_SERVER_TIME.exists(), reason="mcp-server-time is not installed")
async def test_hook_rewrites_a_call_to_a_published_server(
    project: Project, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    """`mcp-server-time` from PyPI: a hook pins the time zone the model asked for to UTC."""
    log = tmp_path / "hooks.log"
    pin = {"arguments": {"timezone": "UTC"}}
    call = {"name": "mcp__time__get_current_time", "arguments": {"timezone": "Europe/Paris"}}
    model = project.script({"tool_calls": [call]}, {"expect": '"timezone": "UTC"', "text": "UTC."})
    project.write_agent(
        model,
        yolo=True,
        mcp_servers={"time": {"command": str(MCP_SERVER_TIME), "timeout": 30}},
        hooks={
            "preToolCall": [
                {"matcher": "^mcp__time__", "command": reply_hook(project, "utc", pin)}
            ],
            "postToolCall": [project.recorder(log)],
        },
    )
    agent = await open_project_agent()

    assert await run_turn(agent, "what time is it in Paris?", RecordingView()) == Answered("UTC.")
    (post,) = read_log(log)
    assert post["arguments"] == {"timezone": "UTC"}
    assert post["result"]["is_error"] is False
    assert "Europe/Paris" not in post["result"]["content"]
