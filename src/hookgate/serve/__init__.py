"""`hookgate serve`: one agent file's hooks as a policy service many agents share.

`app` is the ASGI application (`POST /v1/hook` speaks hookgate's own `http:` hook
protocol, `POST /v1/hook/claude` Claude Code's `type: http` hooks, `GET /healthz`);
`native` maps hookgate's hook input to an event and an outcome back to its reply;
`tokens` reads the bearer tokens; `cli` starts uvicorn; `warm` is what a worker keeps
of its own agent file. Each request is answered as `hookgate hook AGENT` answers an
event (`agents.hookrun`): nothing a client sends is kept between requests but the
audit trail, so any number of instances serve one fleet.
"""
