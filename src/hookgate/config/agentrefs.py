"""The other agents an agent file names: those it may ask (`agents:`) and a team's
`members:`, each an `AgentRef` to its own file, checked where it is written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks.config import parse_duration
from hookgate.hooks.files.yamlfile import Where, check_keys, describe, expect_mapping
from hookgate.hooks.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

AGENT_KEYS = ("file", "description", "timeout")
#: A name `/ask-NAME` can be typed with: an agent's, a team's (a pattern, compiled by `re`
#: at its first use: most commands read no agent's name).
AGENT_NAME = r"[A-Za-z0-9_.-]+\Z"
#: Seconds an asked agent may take to answer, by default: it runs a whole turn.
DEFAULT_ASK_TIMEOUT = 600.0
#: Team tasks that run at once, and rounds one wait of the supervisor may run, by default.
DEFAULT_MAX_PARALLEL = 2
DEFAULT_MAX_ROUNDS = 3


class AgentRef(NamedTuple):
    """Another agent this one may hand questions to."""

    name: str
    file: Path
    description: str = ""
    timeout: float = DEFAULT_ASK_TIMEOUT
    """Seconds its answer may take; past them its process group is stopped."""


class TeamConfig(NamedTuple):
    """The team this agent supervises (`team:`): members take the tasks it creates."""

    name: str
    members: Mapping[str, AgentRef]
    max_parallel: int = DEFAULT_MAX_PARALLEL
    max_rounds: int = DEFAULT_MAX_ROUNDS


def parse_agents(document: Mapping[Any, Any], where: Where, base_dir: Path) -> dict[str, AgentRef]:
    if document.get("agents") is None:
        return {}
    return parse_agent_refs(document["agents"], where.key(document, "agents"), base_dir)


def parse_agent_refs(value: Any, at: Where, base_dir: Path) -> dict[str, AgentRef]:
    """Agents by name, as `agents:` and a team's `members:` list them."""
    node = expect_mapping(value, at, "agents by name")
    agents: dict[str, AgentRef] = {}
    for name, entry in node.items():
        here = at.key(node, name)
        if not isinstance(name, str) or not re.match(AGENT_NAME, name):
            raise here.error(
                f"agent name {name!r} cannot be typed as /ask-{name}",
                hint="use letters, digits, '-', '_' and '.' only (quote a number)",
            )
        entry = expect_mapping(entry, here, "an agent (file, description, timeout)")
        check_keys(entry, here, AGENT_KEYS)
        if "file" not in entry:
            raise here.error("no 'file: PATH' of the agent's own file")
        file = entry["file"]
        if not isinstance(file, str) or not file.strip() or "\x00" in file:
            raise here.key(entry, "file").error(
                f"expected the path of the agent's own file, got {describe(file)}"
            )
        description = entry.get("description", "")
        if not isinstance(description, str):
            raise here.key(entry, "description").error(
                f"expected a string, got {describe(description)}"
            )
        agents[name] = AgentRef(
            name, (base_dir / file).resolve(), description, _ask_timeout(entry, here)
        )
    return agents


def _ask_timeout(entry: Mapping[Any, Any], where: Where) -> float:
    value = entry.get("timeout", DEFAULT_ASK_TIMEOUT)
    seconds: float | None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:  # a whole number past what a float holds
            seconds = None
    else:
        seconds = parse_duration(value)
    if seconds is None or not seconds > 0:
        raise where.key(entry, "timeout").error(
            f"expected a duration above 0, got {describe(value)}", hint="e.g. timeout: 5m"
        )
    return seconds
