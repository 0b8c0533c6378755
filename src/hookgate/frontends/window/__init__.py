"""`hookgate window`: the agent in a browser page served on loopback.

`serve` starts it; `app` is the ASGI application (routes and `guard`, which admits only
the holder of the token); `hub` holds the sessions, each with its event log the page
streams over SSE; `view` turns a turn into those events; `render` makes answers HTML.
Starlette and uvicorn are imported only here, when the command runs.
"""

#: Sessions one window keeps open at most (`--max-sessions`): each holds its session file,
#: its hooks' processes, its event log. Opening one more closes the session idle the
#: longest; with every one running a turn, the new one is refused (503).
DEFAULT_MAX_SESSIONS = 32
