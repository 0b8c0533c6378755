"""`persistent: true` hooks: one process per hook and session, asked event after
event (`run`), over a resident process's pipes (`resident`)."""
