"""hookgate inside other agents: Claude Code, Codex CLI and Gemini CLI run `hookgate hook
AGENT` as their hook command, and one `hookgate.yaml` guards them all.

`protocol` is what every agent's module provides (its event JSON in, hookgate's event
out; hookgate's `Outcome` in, the agent's reply out); `hookrun` runs one event through
the agent file's hooks, trust checked, and fails closed; `audit` keeps each agent
session as a hookgate session; `install` writes the agents' own hook settings.
"""

#: The agents `hookgate hook` and `hookgate install` know, by the name they take, and
#: the module of each: its `PROTOCOL` class and its `settings()`.
AGENT_MODULES = {
    "claude": "hookgate.agents.claude",
    "codex": "hookgate.agents.codex",
    "gemini": "hookgate.agents.gemini",
}
AGENT_NAMES = tuple(AGENT_MODULES)
