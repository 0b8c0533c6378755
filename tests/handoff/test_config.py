"""The agent file's side of hand-offs: `agents:` entries, `max_ask_depth`, and the tool
that appears only when there is someone to ask."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookgate.config.agentfile import DEFAULT_ASK_TIMEOUT, DEFAULT_MAX_ASK_DEPTH, load_agent_file
from hookgate.errors import ConfigError

pytestmark = pytest.mark.anyio


def load(tmp_path: Path, **settings: Any) -> Any:
    path = tmp_path / "hookgate.yaml"
    path.write_text(json.dumps({"model": "scripted:s.yaml", **settings}))
    return load_agent_file(path)


@pytest.mark.parametrize(
    ("value", "seconds"), [(30, 30.0), (2.5, 2.5), ("5m", 300.0), ("7200", 7200.0), (7200, 7200.0)]
)
def test_an_agent_timeout_takes_seconds_or_a_duration(
    tmp_path: Path, value: Any, seconds: float
) -> None:
    config = load(tmp_path, agents={"helper": {"file": "h.yaml", "timeout": value}})

    assert config.agents["helper"].timeout == seconds


def test_agent_defaults(tmp_path: Path) -> None:
    config = load(tmp_path, agents={"helper": {"file": "sub/h.yaml"}})

    ref = config.agents["helper"]
    assert (ref.file, ref.timeout) == ((tmp_path / "sub" / "h.yaml").resolve(), DEFAULT_ASK_TIMEOUT)
    assert config.max_ask_depth == DEFAULT_MAX_ASK_DEPTH


@pytest.mark.parametrize(("settings", "message"), [
    ({"agents": {"helper": {"file": "h.yaml", "timeout": 0}}}, "agents.helper.timeout: expected a duration above 0, got a number 0"),
    ({"agents": {"helper": {"file": "h.yaml", "timeout": "soon"}}}, "expected a duration above 0, got a string 'soon'"),
    ({"agents": {"two words": {"file": "h.yaml"}}}, "cannot be typed as /ask-two words"),
    ({"agents": {"helper": {"file": "h.yaml", "timout": 3}}}, "timout"),
    ({"max_ask_depth": 0}, "max_ask_depth: expected a positive whole number, got a number 0"),
])  # fmt: skip
def test_mistakes_are_config_errors_naming_the_value(
    tmp_path: Path, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        load(tmp_path, **settings)

    assert "hookgate.yaml" in str(caught.value)


async def test_ask_agent_is_offered_only_with_agents_to_ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hookgate.runtime.agent import open_agent
    from hookgate.runtime.consent import AlwaysDeny
    from hookgate.security.trust.record import trust_agent_file
    from hookgate.security.trust.store import TrustStore
    from hookgate.store.session import SessionStore

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text("- text: hi\n")
    opened = []
    for agents in ({}, {"helper": {"file": "h.yaml", "description": "knows the plan"}}):
        load(tmp_path, agents=agents)
        trust_agent_file(tmp_path / "hookgate.yaml", store=TrustStore(tmp_path / "home"))
        agent = await open_agent(
            tmp_path / "hookgate.yaml", notify=lambda _: None, consent=AlwaysDeny(),
            store=SessionStore(tmp_path / "home"),
        )  # fmt: skip
        opened.append(agent)
        await agent.aclose()
    without, with_agents = opened

    assert "ask_agent" not in without.gate.tools
    assert without.handoffs is None
    spec = with_agents.gate.tools.get("ask_agent")
    assert spec is not None
    assert "helper: knows the plan" in spec.spec.description
    assert spec.spec.parameters["properties"]["agent"]["enum"] == ["helper"]
