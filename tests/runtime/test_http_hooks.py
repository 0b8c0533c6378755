"""http hooks in the real turn, against the example policy service run as a real process.

The service is `hookgate.examples.policy_service`, started as users start it; the model
is the real `openai` client against the loopback chat server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hookgate.runtime.turn import Answered, run_turn
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView, chat_messages, served_model
from support.chat_server import ChatServer, ServedReply, ServedToolCall

pytestmark = pytest.mark.anyio

TOKEN = "fleet-token-123"
#: Seconds the service may take to print its address; it starts in well under one.
START_TIMEOUT = 10


@pytest.fixture
def policy_url() -> Iterator[str]:
    """The example service on an ephemeral port, requiring `TOKEN`."""
    service = subprocess.Popen(
        [sys.executable, "-m", "hookgate.examples.policy_service", "--port", "0"],
        env={**os.environ, "POLICY_TOKEN": TOKEN},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert service.stdout is not None
        line = service.stdout.readline()  # "policy service on http://127.0.0.1:PORT/hook"
        yield line.split(" on ")[1].strip()
    finally:
        service.terminate()
        service.wait(START_TIMEOUT)


def policy_hook(url: str) -> dict[str, Any]:
    return {
        "name": "fleet-policy",
        "http": {
            "url": url,
            "headers": {"Authorization": "Bearer ${POLICY_TOKEN}"},
            "env_allowlist": ["POLICY_TOKEN"],
        },
        "onError": "fail",
    }


@pytest.fixture
def use_policy(
    project: Project, chat_server: ChatServer, policy_url: str, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., None]:
    """`use_policy(event, token=TOKEN, **settings)`: an agent file whose `event` hook is
    the service, sending `token` from the environment as its bearer token."""

    def write(event: str, token: str = TOKEN, **settings: Any) -> None:
        monkeypatch.setenv("POLICY_TOKEN", token)
        hooks = {event: [policy_hook(policy_url)]}
        project.write_agent(served_model(chat_server.url), hooks=hooks, **settings)

    return write


def tool_answers(body: Any) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in chat_messages(body) if m["role"] == "tool"}


async def test_the_policy_service_allows_denies_and_rewrites_in_a_real_turn(
    project: Project,
    chat_server: ChatServer,
    open_project_agent: OpenAgent,
    use_policy: Callable[..., None],
) -> None:
    use_policy("preToolCall", yolo=True)

    view = await clean_up_and_push(project, chat_server, open_project_agent)

    assert (project.dir / "allowed").exists()
    assert any("--force-with-lease" in notice for notice in view.notices)


async def clean_up_and_push(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> RecordingView:
    """A turn whose model calls `rm -rf`, `git push --force` and `touch`: the policy
    must have denied the first and rewritten the second."""
    (project.dir / "precious").mkdir()
    chat_server.queue(
        ServedReply(
            tool_calls=[
                ServedToolCall("shell", {"command": "rm -rf precious"}, id="call_rm"),
                ServedToolCall(
                    "shell", {"command": "echo git push --force > pushed"}, id="call_push"
                ),
                ServedToolCall("shell", {"command": "touch allowed"}, id="call_touch"),
            ]
        ),
        ServedReply(text="Done what was allowed."),
    )
    agent = await open_project_agent()
    view = RecordingView()

    outcome = await run_turn(agent, "Clean up and push", view)

    assert outcome == Answered("Done what was allowed.")
    assert (project.dir / "precious").is_dir()
    assert (project.dir / "pushed").read_text() == "git push --force-with-lease\n"
    answers = tool_answers(chat_server.requests[1].body)
    assert (
        answers["call_rm"] == "[denied by a hook: policy: rm -rf is not allowed (rm -rf precious)]"
    )
    return view


async def test_the_policy_service_redacts_a_question_before_the_model_sees_it(
    chat_server: ChatServer, open_project_agent: OpenAgent, use_policy: Callable[..., None]
) -> None:
    use_policy("preGeneration")
    chat_server.queue(ServedReply(text="Rotate it."))
    agent = await open_project_agent()

    await run_turn(agent, "is sk-abcdefghijklmnop1234 still valid?", RecordingView())

    assert "sk-abcdefghijklmnop1234" not in chat_server.sent_text()
    last = chat_messages(chat_server.requests[0].body)[-1]
    assert last["content"] == "is [REDACTED] still valid?"


async def test_a_wrong_token_fails_the_hook_and_onerror_fail_denies(
    project: Project,
    chat_server: ChatServer,
    open_project_agent: OpenAgent,
    use_policy: Callable[..., None],
) -> None:
    use_policy("preToolCall", token="stale-token", yolo=True)
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("shell", {"command": "touch x"}, id="call_x")]),
        ServedReply(text="The policy service refused."),
    )
    agent = await open_project_agent()

    await run_turn(agent, "Touch x", RecordingView())

    assert not (project.dir / "x").exists()
    answer = tool_answers(chat_server.requests[1].body)["call_x"]
    assert "hook 'fleet-policy' failed: POST" in answer
    assert "HTTP 401" in answer
    assert "stale-token" not in json.dumps(answer)


async def test_a_claude_settings_http_handler_denies_and_rewrites_in_a_real_turn(
    project: Project,
    chat_server: ChatServer,
    open_project_agent: OpenAgent,
    policy_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same service, reached as Claude Code reaches it: a `.claude/settings.json`
    `type: http` handler, Claude's input posted and Claude's reply read back."""
    monkeypatch.setenv("HOME", str(project.home))  # no ~/.claude of the machine's user
    monkeypatch.setenv("POLICY_TOKEN", TOKEN)
    handler = {"type": "http", "url": policy_url, "allowedEnvVars": ["POLICY_TOKEN"],
               "headers": {"Authorization": "Bearer $POLICY_TOKEN"}}  # fmt: skip
    (project.dir / ".claude").mkdir()
    (project.dir / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}})
    )
    project.write_agent(served_model(chat_server.url), yolo=True, claude_settings=True)

    view = await clean_up_and_push(project, chat_server, open_project_agent)

    assert any(n.endswith("policy: --force became --force-with-lease") for n in view.notices)
