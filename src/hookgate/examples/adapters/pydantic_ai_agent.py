#!/usr/bin/env python3
"""A pydantic-ai agent under hookgate's hooks, offline: a scripted model asks for
`rm -rf build/`, the guard denies it, and the model reads why.

    pip install 'hookgate[pydantic-ai]' && python examples/adapters/pydantic_ai_agent.py
"""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from hookgate.adapters.pydantic_ai import hookgate_capability

HOOKS = Path(__file__).with_name("hookgate.yaml")


def shell(command: str) -> str:
    """Run a shell command (this example only pretends to)."""
    return f"(pretend) ran {command}"


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Asks for rm -rf once, then answers with what the tool said."""
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("shell", {"command": "rm -rf build/"})])
    last = messages[-1].parts[-1]
    return ModelResponse(parts=[TextPart(f"The tool said: {last.model_response_str()}")])  # type: ignore[union-attr]


def main() -> None:
    agent = Agent(FunctionModel(scripted), tools=[shell], capabilities=[hookgate_capability(HOOKS)])
    print(agent.run_sync("clean the build directory").output)


if __name__ == "__main__":
    main()
