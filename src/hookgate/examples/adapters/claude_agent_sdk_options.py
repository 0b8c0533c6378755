#!/usr/bin/env python3
"""Claude Agent SDK options under hookgate's hooks. With Claude Code installed:

    options = ClaudeAgentOptions(hooks=hookgate_hooks(HOOKS))
    async with hooks.guard():            # postGeneration on an error, too
        async for message in query(prompt="clean the build directory", options=options): ...

Offline (this script): the PreToolUse callback is asked what the CLI would ask it
about `rm -rf build/`, and prints its answer.

    pip install 'hookgate[claude-agent-sdk]' && python examples/adapters/claude_agent_sdk_options.py
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from claude_agent_sdk import ClaudeAgentOptions

from hookgate.adapters.claude_agent_sdk import hookgate_hooks

HOOKS = Path(__file__).with_name("hookgate.yaml")


async def main() -> None:
    hooks = hookgate_hooks(HOOKS)  # warns: the SDK cannot rewrite a question
    options = ClaudeAgentOptions(hooks=hooks)  # type: ignore[arg-type]
    [matcher] = (options.hooks or {})["PreToolUse"]
    event = {
        "hook_event_name": "PreToolUse",
        "session_id": "example",
        "transcript_path": "",
        "cwd": os.getcwd(),
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf build/"},
        "tool_use_id": "toolu_1",
    }
    answer = await matcher.hooks[0](event, "toolu_1", {"signal": None})  # type: ignore[arg-type]
    print(json.dumps(answer, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
