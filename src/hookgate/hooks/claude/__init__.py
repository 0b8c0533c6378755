"""Claude Code's files as hookgate's: the hooks of its settings files
(`settings`, `claude_settings:` in a config file) and its permission rules
(`permissions`)."""
