"""What the model, the history and the hooks read in place of what a hook stopped.

One wording for the agent runtime and the framework adapters alike (both import it from
here, the engine, since the adapters never import the runtime): a hook author who
matches on `[denied by a hook: …]` sees the same text whichever agent ran the hook.
"""

#: Where a blocked question was: the question itself must not reach the model or the log.
BLOCKED_MARKER = "[prompt blocked by a hook: {reason}]"
#: What postGeneration hooks read when the turn ended before preGeneration allowed the
#: question: it may hold exactly what preGeneration exists to stop.
UNCHECKED_MARKER = "[prompt not checked: the turn ended before preGeneration finished]"
#: The answer to a blocked question when the blocking hook gave none.
DEFAULT_BLOCK_RESPONSE = "The question was stopped by a hook and not sent to the model."
#: What the model reads for a call a hook denied.
DENIED_CALL = "[denied by a hook: {reason}]"
#: What the model reads for a call a hook stopped along with the rest of the turn.
STOPPED_CALL = "[not run: {reason}]"
#: What the model, the history and the user get for a result a fail-safe hook failed on.
WITHHELD_RESULT = "[result withheld: hook {hook!r} failed]"
#: What the user reads of a block on an event too late to stop anything (a result, the
#: turn's end): the hook's objection, which the event carries on as context.
OBJECTED = "{hook} objected: {reason}"
#: What the model reads for a hand-off a preAsk hook refused.
REFUSED_HANDOFF = "[hand-off refused: {reason}]"
#: How a guardrail's hook is named, before its rule's name: `guardrail 'shell'` in what
#: the user reads.
GUARDRAIL_PREFIX = "guardrail "
