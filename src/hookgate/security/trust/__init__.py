"""Trust: nothing an agent file names runs until its owner trusts it, as it was then.

`closure.closure_of` finds the files an agent file makes hookgate run or read;
`store.TrustStore` keeps their digests under `$HOOKGATE_HOME`; `check.require_trust`
is the check every entry point makes first; `record.trust_agent_file` records a
closure; `command` is `hookgate trust`. Import from those modules: this package
imports nothing, so that importing one of them costs that module alone.
"""
