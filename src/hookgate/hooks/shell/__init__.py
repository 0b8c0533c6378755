"""Reading a bash command line as bash will run it: the engine's, since both the trust
resolver (what a hook runs) and the runtime's permission rules (what a call runs) need
it, and the engine imports nothing of the runtime.

`words` walks tree-sitter's bash grammar into commands, a word's value read by
`literal`; `code` holds the wrappers and variables as data; `runners` knows each
command that runs code of its own.
"""
