"""The Agent Client Protocol front end (`hookgate acp`): `agent` answers the
editor's requests, `session` runs each ACP session's turns, `wire` turns a turn into
session updates."""
