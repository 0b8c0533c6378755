"""The agent runtime: one session assembled (`agent`), its turn (`turn.run_turn`),
and the one gate every tool call passes (`toolcall`): consent, approvals, the per-reply
caps, compaction of the history, the signals that cancel a step.

Front ends call it; it calls the tools, the models and the hook engine below it."""
