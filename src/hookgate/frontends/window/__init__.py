"""`hookgate window`: the agent in a browser page served on loopback.

`serve` starts it; `app` is the ASGI application (routes and `guard`, which admits only
the holder of the token); `hub` holds the sessions, each with its event log the page
streams over SSE; `view` turns a turn into those events; `render` makes answers HTML.
Starlette and uvicorn are imported only here, when the command runs.
"""
