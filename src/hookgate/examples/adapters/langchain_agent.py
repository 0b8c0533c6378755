#!/usr/bin/env python3
"""A LangChain v1 agent under hookgate's hooks, offline: a scripted model asks for
`rm -rf build/`, the guard denies it, and the model reads why.

    pip install 'hookgate[langchain]' && python examples/adapters/langchain_agent.py
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from hookgate.adapters.langchain import hookgate_middleware

HOOKS = Path(__file__).with_name("hookgate.yaml")


def shell(command: str) -> str:
    """Run a shell command (this example only pretends to)."""
    return f"(pretend) ran {command}"


class OfflineModel(GenericFakeChatModel):
    """LangChain's scripted chat model; a real one binds the tools it is given."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OfflineModel:
        return self


def main() -> None:
    wants_rm = AIMessage(
        content="", tool_calls=[{"name": "shell", "args": {"command": "rm -rf build/"}, "id": "1"}]
    )
    model = OfflineModel(messages=iter([wants_rm, "A hook denied rm -rf; build/ stays."]))
    agent = create_agent(model, [shell], middleware=[hookgate_middleware(HOOKS)])
    state = agent.invoke({"messages": [{"role": "user", "content": "clean the build directory"}]})
    for message in state["messages"]:
        print(f"{message.type}: {message.text or message.tool_calls}")


if __name__ == "__main__":
    main()
