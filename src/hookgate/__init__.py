"""hookgate: hooks for AI agents."""
