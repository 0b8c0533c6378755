"""The Claude Agent SDK adapter end to end: the SDK's `query()` drives the real Claude Code
CLI (the one scripts/install-agent-clis pins, `cli_path`), which talks to a scripted
Messages API on loopback, with the test hooks as real processes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

from adapters.conftest import Hooked
from agent_clis.conftest import AGENT_CLIS
from agent_clis.mock_anthropic import MockAnthropic, ToolUse
from hookgate.adapters.claude_agent_sdk import CannotRewritePrompt, hookgate_hooks

CLAUDE = AGENT_CLIS / "claude"

pytestmark = pytest.mark.skipif(
    not CLAUDE.exists(),
    reason=f"Claude Code is not installed ({CLAUDE}): run scripts/install-agent-clis",
)


def converse(hooked: Hooked, question: str, server: MockAnthropic) -> str | None:
    """`question` through `query()` and the real CLI; the final result's text."""
    with pytest.warns(CannotRewritePrompt):
        hooks = hookgate_hooks(hooked.file)
    env = {
        "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-test",
        "CLAUDE_CONFIG_DIR": str(hooked.dir / "claude-config"), "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
    }  # fmt: skip
    options = ClaudeAgentOptions(
        hooks=hooks,  # type: ignore[arg-type]
        cli_path=CLAUDE,
        cwd=hooked.dir,
        env=env,
        allowed_tools=["Bash"],
        setting_sources=[],
    )

    async def run() -> str | None:
        answer = None
        async with hooks.guard():
            async for message in query(prompt=question, options=options):
                if isinstance(message, ResultMessage):
                    answer = message.result
        return answer

    return asyncio.run(asyncio.wait_for(run(), 120))


def test_the_real_cli_asks_the_hooks_and_the_model_reads_the_denial(hooked: Hooked) -> None:
    (hooked.dir / "build").mkdir()
    script: list[Any] = [
        ToolUse("Bash", {"command": "rm -rf build", "description": "clean the build"}),
        "I will not.",
    ]
    with MockAnthropic(script) as server:
        answer = converse(hooked, "clean up", server)
    assert (hooked.dir / "build").is_dir()  # the guard held
    [denied] = server.tool_results()
    assert "rm -rf is not allowed by this project" in denied  # the model read the hook
    assert answer == "I will not."
    assert hooked.ends() == [{"prompt": "clean up", "answer": "I will not.", "outcome": "answered"}]
