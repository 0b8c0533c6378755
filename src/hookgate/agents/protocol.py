"""What an agent's module provides: its hook input read as a hookgate event, and
hookgate's decision written back in the agent's own protocol.

An `AgentEvent` is the agent's event mapped (hookgate's event name and payload, tools
under hookgate's names) with what the audit trail needs; a `Reply` is what the hook
process prints and exits with. Every module is one `AgentProtocol`.
"""

from __future__ import annotations

from collections.abc import Mapping

from hookgate.hooks import Outcome
from hookgate.hooks.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol
else:  # a structural type for the checker; at run time, a class like any other
    Protocol = object


class AgentEvent(NamedTuple):
    """One event of another agent, as hookgate's hooks read it."""

    agent: str
    """Which agent sent it (`claude`, `codex`, `gemini`)."""
    native: str
    """The agent's own name of the event (`PreToolUse`)."""
    event: str
    """hookgate's event (`preToolCall`)."""
    payload: dict[str, Any]
    """hookgate's payload of that event: `tool`, `call_id`, `arguments`, …"""
    session_id: str
    """The agent's id of its session."""
    cwd: str
    project_dir: str
    given: Mapping[str, Any]
    """The agent's input as read, for what its reply must echo."""
    transcript_path: str | None = None
    permission_mode: str | None = None
    client: str | None = None
    """The client that sent it to `hookgate serve` (its token's name), if any."""


class Reply(NamedTuple):
    """What the hook process answers the agent with."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


class AgentProtocol(Protocol):
    """One agent's hook protocol."""

    name: str
    """The agent's name on the command line (`hookgate hook claude`)."""
    project_env: str
    """The variable the agent sets to its project's directory for its hooks."""

    def parse(self, given: Mapping[str, Any], environ: Mapping[str, str]) -> AgentEvent | None:
        """The event `given` (the agent's stdin), mapped; None for an event hookgate
        has no counterpart of (answered with nothing)."""

    def reply(self, event: AgentEvent, outcome: Outcome) -> Reply:
        """hookgate's decision on `event` in the agent's own words."""

    def refuse(self, event: AgentEvent, reason: str) -> Reply:
        """The nearest thing to a block the agent can do on `event`: hookgate could not
        decide, and a hook that must not fail open guards it."""

    def notice(self, event: AgentEvent, text: str) -> Reply:
        """`text` shown to the user; the agent goes on as if no hook ran."""


class HookSettings(NamedTuple):
    """Where and how one agent reads its hook settings."""

    agent: str
    events: tuple[str, ...]
    """The agent's events that hookgate answers, in the agent's names."""
    tool_events: tuple[str, ...]
    """Of those, the ones whose entries take a tool `matcher` (`*`: every tool)."""
    project_file: str
    """The settings file, relative to the project's directory."""
    user_file: str
    """The user's settings file, relative to the home directory."""
    timeout: int
    """The hook's timeout, in the agent's unit: long enough for hookgate's own to hold."""
    approve: str
    """What the user must still approve in the agent, if anything."""
    hook_name: str | None = None
    """The `name` the hook entry carries, where the agent names hooks."""
