"""`persistent: true` hooks: one process per hook and session, asked event after
event (`run`), by a `resident` process's drivers (sync and asyncio) over its pipes, a
line at a time (`lines`)."""
