"""`hookgate serve`: check the agent file's trust and the tokens, then run uvicorn.

The workers are started by uvicorn, which imports `app.create_app` in each: the options
reach them as `HOOKGATE_SERVE_*` variables. The agent file must be trusted before the
service starts (`hookgate trust FILE` at deploy time); it is never fetched from a client.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

#: Where the service listens unless told: loopback, so that exposing it is a choice.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8731


def add_arguments(serve: argparse.ArgumentParser) -> None:
    """Add the arguments of `hookgate serve` to its parser (`hookgate.cli` names it)."""
    serve.add_argument("--agent", "--config", dest="agent", type=Path, metavar="FILE",
                       default=argparse.SUPPRESS,
                       help="the trusted agent file (default: ./hookgate.yaml)")  # fmt: skip
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"default: {DEFAULT_HOST}")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default: {DEFAULT_PORT}")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    serve.add_argument("--token-file", type=Path, metavar="FILE",
                       help="one 'NAME TOKEN' a line (else $HOOKGATE_SERVE_TOKEN)")  # fmt: skip
    serve.add_argument("--time-limit", type=float, metavar="SECONDS",
                       help="the longest a decision may take (default: 630)")  # fmt: skip
    serve.add_argument("--ssl-certfile", type=Path, metavar="FILE",
                       help="serve HTTPS with this certificate (PEM), and --ssl-keyfile")  # fmt: skip
    serve.add_argument("--ssl-keyfile", type=Path, metavar="FILE", help="its private key (PEM)")
    serve.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from hookgate.hooks import HookgateError
    from hookgate.security.trust.check import load_trusted
    from hookgate.serve import app
    from hookgate.serve.tokens import load_tokens

    agent_file = Path(args.agent).resolve()
    if args.workers < 1 or (args.time_limit is not None and args.time_limit <= 0):
        print("hookgate serve: --workers and --time-limit must be positive", file=sys.stderr)
        return 1
    if (args.ssl_certfile is None) != (args.ssl_keyfile is None):
        print("hookgate serve: HTTPS needs both --ssl-certfile and --ssl-keyfile", file=sys.stderr)
        return 1
    try:
        load_trusted(agent_file)
        load_tokens(args.token_file, os.environ)
    except HookgateError as exc:
        print(f"hookgate serve: {exc}", file=sys.stderr)
        return 1
    try:
        import uvicorn
    except ImportError:
        print("hookgate serve: uvicorn is not installed\n  hint: pip install 'hookgate[serve]'",
              file=sys.stderr)  # fmt: skip
        return 1
    os.environ[app.AGENT_VARIABLE] = str(agent_file)
    if args.token_file is not None:
        os.environ[app.TOKEN_FILE_VARIABLE] = str(args.token_file.resolve())
    if args.time_limit is not None:
        os.environ[app.TIME_LIMIT_VARIABLE] = str(args.time_limit)
    from hookgate.listening import bounded_protocol, raise_open_files_limit, server_options

    raise_open_files_limit()
    uvicorn.run("hookgate.serve.app:create_app", factory=True, host=args.host, port=args.port,
                workers=args.workers, log_level="warning", access_log=False,
                http=bounded_protocol(), **server_options(),
                ssl_certfile=args.ssl_certfile and str(args.ssl_certfile),
                ssl_keyfile=args.ssl_keyfile and str(args.ssl_keyfile))  # fmt: skip
    return 0
