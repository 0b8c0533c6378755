"""The agent file (`hookgate.yaml`), read once and strictly: `agentfile` the whole,
`agentrefs` the other agents it may ask or lead, `ruletext` a permission rule as written."""
