#!/usr/bin/env python3
"""An OpenAI Agents SDK agent under hookgate's hooks, offline: the SDK's scripted model
asks for `rm -rf build/`, the guard denies it, and the model reads why.

    pip install 'hookgate[openai-agents]' && python examples/adapters/openai_agents_agent.py
"""

from __future__ import annotations

from pathlib import Path

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from hookgate.adapters.openai_agents import hookgate_agent

HOOKS = Path(__file__).with_name("hookgate.yaml")


@function_tool
def shell(command: str) -> str:
    """Run a shell command (this example only pretends to)."""
    return f"(pretend) ran {command}"


def main() -> None:
    set_tracing_disabled(True)  # offline
    model = ScriptedModel(
        [
            [function_call("shell", {"command": "rm -rf build/"}, call_id="1")],
            [assistant_message("A hook denied rm -rf; build/ stays.")],
        ]
    )
    agent = Agent(name="cleaner", model=model, tools=[shell])
    result = hookgate_agent(agent, HOOKS).run_sync("clean the build directory")
    for item in result.to_input_list():
        print(item)
    print(result.final_output)


if __name__ == "__main__":
    main()
