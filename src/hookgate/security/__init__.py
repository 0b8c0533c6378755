"""What may run: `trust` (nothing an agent file names runs until its owner trusts
it, as it was then), `policy` (which tool calls run, need consent, never run) and
`rulecheck` (what is said about permission rules that cannot match).

The OS sandbox confines the tools' processes: it is `hookgate.tools.sandbox`, since the
tools read its settings."""
