"""Fixtures for the tool tests: a project directory, a context, and a way to call a tool."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from hookgate.tools import Tool, ToolContext, ToolResult

RunTool = Callable[..., ToolResult]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory (its real path, so `pwd -P` agrees)."""
    path = tmp_path / "project"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    """Tools run in `project` with this process's environment and short limits."""
    return ToolContext(project_dir=project, env=dict(os.environ), shell_timeout=10.0)


@pytest.fixture
def run_tool(ctx: ToolContext) -> RunTool:
    """`run_tool(tool, arguments, ctx=None)`: one call of `tool` on a fresh event loop."""

    def run(
        tool: Tool, arguments: Mapping[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        return asyncio.run(tool.run(arguments, context or ctx))

    return run
