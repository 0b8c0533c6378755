"""Policy as tested code: `hookgate hooks test` and `hookgate hooks replay`.

A case (`cases.py`) or a recorded call (`replay/`) goes through the session's real
gate, its tools replaced by stand-ins that record what reached them (`gate.py`);
`evaluate.py` reads the gate's answer. Nothing runs but the hooks.
"""
