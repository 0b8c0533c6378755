"""The ACP permission request shows the whole call and offers "always" for that exact call.

`hookgate acp` runs as a subprocess driven by the ACP package's real client; the
scripted model hides a second command past a screenful of spaces.
"""

from __future__ import annotations

import pytest

from runtime.project import Project
from support.acp_client import RecordingClient, StartPeer
from support.hostile_calls import HIDING, shell, touch_one_then_one_and_two

pytestmark = pytest.mark.anyio


async def test_the_permission_request_holds_the_whole_call_and_each_command(
    project: Project, start_peer: StartPeer
) -> None:
    project.write_agent(project.script({"tool_calls": [shell(HIDING)]}, {"text": "Done."}))
    client = RecordingClient(answers=["reject_once"])

    async with start_peer(client) as peer:
        session = await peer.new_session()
        await peer.prompt(session, "Run the tests")

    ((_, asked, options),) = client.permissions
    (content,) = asked.content or []
    shown = content.content.text
    assert HIDING in shown
    assert "2. touch HIDDEN" in shown
    assert asked.raw_input == {"command": HIDING}
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    assert not (project.dir / "HIDDEN").exists()


async def test_allow_always_covers_that_exact_call_for_the_session_only(
    project: Project, start_peer: StartPeer
) -> None:
    touch_one_then_one_and_two(project)  # each session plays the script from the start
    client = RecordingClient(answers=["allow_always"])  # then `reject_once`

    async with start_peer(client) as peer:
        first = await peer.new_session()
        await peer.prompt(first, "Touch things")
        second = await peer.new_session()
        await peer.prompt(second, "Touch one again")

    asked = [(session, call.raw_input) for session, call, _ in client.permissions]
    assert asked == [
        (first, {"command": "touch one"}),
        (first, {"command": "touch two"}),  # `touch one` again was not asked about
        (second, {"command": "touch one"}),  # a new session asks again
        (second, {"command": "touch one"}),
        (second, {"command": "touch two"}),
    ]
    assert (project.dir / "one").exists()
    assert not (project.dir / "two").exists()
