"""`hookgate hooks replay`: recorded sessions of hookgate and of other agents, read into
one shape (`recorded.py`, a module per format) and put through today's gate (`command.py`).
"""
