"""Hook decisions as the turn applies them: each one seen where the user and model see it.

The model is the real `openai` client against the loopback server, so "what the model
received" is read from the requests the server recorded; "what was recorded" is read
from the session file on disk.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from hookgate.runtime.agent import SessionStopped
from hookgate.runtime.turn import Answered, PromptBlocked, run_turn
from hookgate.view import NoticeKind
from runtime.conftest import OpenAgent
from runtime.project import Project, RecordingView, chat_messages, read_log, served_model
from support.chat_server import ChatServer, ServedReply, ServedToolCall

pytestmark = pytest.mark.anyio


def reply_hook(
    project: Project, name: str, reply: dict[str, Any], when: str = ""
) -> dict[str, Any]:
    """A hook answering `reply` (as JSON), only when its stdin contains `when`."""
    body = f"grep -qF -- {shlex.quote(when)} && echo {shlex.quote(json.dumps(reply))}; exit 0"
    return {"name": name, "command": project.hook(name, body)}


def tool_messages(body: Any) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in chat_messages(body) if m["role"] == "tool"}


async def test_blocked_question_leaves_the_marker_and_the_response_and_never_reaches_the_model(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    block = {"action": "block", "reason": "no passwords", "message": "Ask without the password."}
    project.write_agent(
        served_model(chat_server.url),
        hooks={
            "preGeneration": [reply_hook(project, "stop", block)],
            "postGeneration": [project.recorder(log)],
        },
    )
    agent = await open_project_agent()

    view = RecordingView()
    outcome = await run_turn(agent, "my password is hunter2", view)

    assert outcome == PromptBlocked("no passwords", "Ask without the password.")
    assert view.kinds == [NoticeKind.BLOCKED]
    assert chat_server.requests == []
    expected = [
        {"role": "user", "content": "[prompt blocked by a hook: no passwords]"},
        {"role": "assistant", "content": "Ask without the password."},
    ]
    assert project.messages() == expected
    assert [m.to_json() for m in agent.history.messages] == expected
    (post,) = read_log(log)
    assert post["prompt"] == "[prompt blocked by a hook: no passwords]"
    assert post["answer"] == "Ask without the password."
    assert post["outcome"] == "blocked"


async def test_rewritten_question_is_what_is_recorded_and_sent(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    rewrite = {"prompt": "What is in README.md?"}
    project.write_agent(
        served_model(chat_server.url),
        hooks={"preGeneration": [reply_hook(project, "rewrite", rewrite)]},
    )
    chat_server.queue(ServedReply(text="A title."))
    agent = await open_project_agent()

    await run_turn(agent, "wat is in teh readme", RecordingView())

    (request,) = chat_server.requests
    assert chat_messages(request.body)[-1] == {"role": "user", "content": "What is in README.md?"}
    assert "teh readme" not in chat_server.sent_text()
    assert project.messages()[0] == {"role": "user", "content": "What is in README.md?"}


async def test_added_context_reaches_every_request_of_its_turn_and_none_of_the_next(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    context = {"context": "CONTEXT-FROM-HOOK: the build uses make"}
    project.write_agent(
        served_model(chat_server.url),
        yolo=True,
        hooks={"preGeneration": [reply_hook(project, "ctx", context, when="first question")]},
    )
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("shell", {"command": "true"}, id="call_1")]),
        ServedReply(text="Use make."),
        ServedReply(text="Still make."),
    )
    agent = await open_project_agent()

    await run_turn(agent, "first question: how do I build?", RecordingView())
    await run_turn(agent, "second one", RecordingView())

    first, second, next_turn = (json.dumps(r.body) for r in chat_server.requests)
    assert "CONTEXT-FROM-HOOK" in first
    assert "CONTEXT-FROM-HOOK" in second
    assert "CONTEXT-FROM-HOOK" not in next_turn
    assert "first question: how do I build?" in next_turn
    assert all("CONTEXT-FROM-HOOK" not in m["content"] for m in project.messages())


async def test_denied_tool_call_answers_the_model_and_the_turn_goes_on(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    deny = {"action": "deny", "reason": "no network from here"}
    project.write_agent(
        served_model(chat_server.url),
        yolo=True,
        hooks={"preToolCall": [reply_hook(project, "deny", deny, when="curl")]},
    )
    chat_server.queue(
        ServedReply(
            tool_calls=[
                ServedToolCall("shell", {"command": "curl example.com > fetched"}, id="call_curl"),
                ServedToolCall("shell", {"command": "touch allowed"}, id="call_touch"),
            ]
        ),
        ServedReply(text="The download was denied."),
    )
    agent = await open_project_agent()
    view = RecordingView()

    outcome = await run_turn(agent, "Fetch example.com", view)

    assert outcome == Answered("The download was denied.")
    assert not (project.dir / "fetched").exists()
    assert (project.dir / "allowed").exists()
    answers = tool_messages(chat_server.requests[1].body)
    assert answers["call_curl"] == "[denied by a hook: no network from here]"
    denied = [result for call, result in view.finished if call.id == "call_curl"]
    assert [r.is_error for r in denied] == [True]


async def test_replaced_arguments_run_but_the_history_keeps_the_models(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    replace = {"arguments": {"command": "touch replaced"}}
    project.write_agent(
        served_model(chat_server.url),
        yolo=True,
        hooks={"preToolCall": [reply_hook(project, "swap", replace)]},
    )
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("shell", {"command": "touch original"})]),
        ServedReply(text="Done."),
    )
    agent = await open_project_agent()

    await run_turn(agent, "Touch a file", RecordingView())

    assert (project.dir / "replaced").exists()
    assert not (project.dir / "original").exists()
    (call,) = project.messages()[1]["tool_calls"]
    assert call["arguments"] == {"command": "touch original"}
    (sent,) = chat_messages(chat_server.requests[1].body)[2]["tool_calls"]
    assert json.loads(sent["function"]["arguments"]) == {"command": "touch original"}


async def test_a_denied_call_with_replaced_arguments_is_recorded_redacted_everywhere(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    redact = {
        "action": "deny",
        "reason": "the call holds a token",
        "arguments": {"command": "curl -H 'Authorization: [REDACTED]' example.test"},
    }
    project.write_agent(
        served_model(chat_server.url),
        yolo=True,
        hooks={"preToolCall": [reply_hook(project, "redact", redact, when="tok-")]},
    )
    asked = {"command": "curl -H 'Authorization: tok-5ecret' example.test"}
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("shell", asked, id="c1")]),
        ServedReply(text="I may not send that."),
    )
    agent = await open_project_agent()
    view = RecordingView()

    await run_turn(agent, "Call the API", view)

    (call,) = project.messages()[1]["tool_calls"]
    assert call["arguments"] == redact["arguments"]
    (sent,) = chat_messages(chat_server.requests[1].body)[2]["tool_calls"]
    assert json.loads(sent["function"]["arguments"]) == redact["arguments"]
    assert [dict(c.arguments) for c in view.started] == [redact["arguments"]]
    assert "tok-5ecret" not in repr(view.finished) + repr(view.notices)
    assert all("tok-5ecret" not in path.read_text() for path in project.files_under_home())


async def test_replaced_result_is_what_the_model_and_the_user_see(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    (project.dir / "notes.txt").write_text("the real content\n")
    replace = {"result": "REPLACED BY HOOK"}
    project.write_agent(
        served_model(chat_server.url),
        hooks={"postToolCall": [reply_hook(project, "swap", replace)]},
    )
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("read_file", {"path": "notes.txt"}, id="c1")]),
        ServedReply(text="Ok."),
    )
    agent = await open_project_agent()
    view = RecordingView()

    await run_turn(agent, "Read notes.txt", view)

    assert tool_messages(chat_server.requests[1].body) == {"c1": "REPLACED BY HOOK"}
    assert "the real content" not in chat_server.sent_text()
    assert [result.content for _, result in view.finished] == ["REPLACED BY HOOK"]
    assert "the result of read_file was replaced by a hook" in view.notices


async def test_session_start_block_aborts_before_any_turn(
    project: Project, chat_server: ChatServer, open_project_agent: OpenAgent
) -> None:
    project.write_agent(
        served_model(chat_server.url),
        hooks={"sessionStart": [{"name": "closed", "command": "echo 'closed today' >&2; exit 2"}]},
    )

    with pytest.raises(SessionStopped, match="closed today"):
        await open_project_agent()

    assert chat_server.requests == []
    (record,) = [r for r in project.records() if r.get("type") == "event"]
    assert record["kind"] == "session_stopped"


@pytest.mark.parametrize(
    ("model_asks", "hook_runs", "deny", "ran"),
    [
        # A deny rule on the model's own arguments holds although a hook rewrote them.
        ("touch forbidden-by-rule", "touch rewritten", "shell(touch forbidden*)", None),
        # A hook's rewrite is trusted as is: not judged again, even into a denied form.
        ("touch harmless", "touch forbidden-but-rewritten", "shell(touch forbidden*)",
         "forbidden-but-rewritten"),
    ],
)  # fmt: skip
async def test_permission_policy_judges_the_models_original_arguments(
    project: Project,
    chat_server: ChatServer,
    open_project_agent: OpenAgent,
    model_asks: str,
    hook_runs: str,
    deny: str,
    ran: str | None,
) -> None:
    project.write_agent(
        served_model(chat_server.url),
        yolo=True,
        permissions={"deny": [deny]},
        hooks={"preToolCall": [reply_hook(project, "swap", {"arguments": {"command": hook_runs}})]},
    )
    chat_server.queue(
        ServedReply(tool_calls=[ServedToolCall("shell", {"command": model_asks}, id="c1")]),
        ServedReply(text="Ok."),
    )
    agent = await open_project_agent()

    await run_turn(agent, "Touch something", RecordingView())

    made = sorted(
        p.name for p in project.dir.iterdir() if p.name.startswith(("touch", "forb", "rew"))
    )
    answer = tool_messages(chat_server.requests[1].body)["c1"]
    if ran is None:
        assert answer == f"[denied by the permission rule {deny!r}]"
        assert made == []
    else:
        assert answer == "[no output]"
        assert made == [ran]
