#!/usr/bin/env python3
"""A policy service for http hooks (native or claude format): one server, every agent's rules.

    POLICY_TOKEN=s3cret python3 policy_service.py --port 8787

Point any number of agents at it (docs/hooks.md, "HTTP hooks"). It denies `rm -rf`
in shell commands, turns `git push --force` into `--force-with-lease`, and redacts
API keys from questions (native hooks only: Claude's cannot rewrite a prompt);
everything else is allowed. Each event is answered in the format it came in. With
POLICY_TOKEN set, a request without `Authorization: Bearer <token>` gets 401, which
fails the hook. Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import hmac
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RM_RF = re.compile(r"\brm\s+-[a-zA-Z]*(r[a-zA-Z]*f|f[a-zA-Z]*r)")
FORCE_PUSH = re.compile(r"(\bgit\s+push\b.*?)\s--force\b(?!-)")
API_KEY = re.compile(r"sk-[A-Za-z0-9]{16,}")
REWRITTEN = "policy: --force became --force-with-lease"
#: The largest request body read; hookgate's events are far smaller.
MAX_BODY = 1024 * 1024


def decide(event: dict[str, Any]) -> dict[str, Any]:
    """The reply to one event, in the format it came in; {} allows it unchanged."""
    if "hook_event_name" in event:
        return decide_claude(event)
    name = event.get("event")
    if name == "preToolCall" and event.get("tool") == "shell":
        command = str(event.get("arguments", {}).get("command", ""))
        if RM_RF.search(command):
            return {"action": "deny", "reason": deny_reason(command)}
        safer = FORCE_PUSH.sub(r"\1 --force-with-lease", command)
        if safer != command:
            return {"arguments": {**event["arguments"], "command": safer}, "message": REWRITTEN}
    if name == "preGeneration":
        prompt = str(event.get("prompt", ""))
        clean = API_KEY.sub("[REDACTED]", prompt)
        if clean != prompt:
            return {"prompt": clean, "message": "policy: an API key was redacted"}
    return {}


def decide_claude(event: dict[str, Any]) -> dict[str, Any]:
    """The same rules for a Claude Code hook (`format: claude`, or a `.claude/settings.json`
    http handler): a Bash call is denied or its input rewritten."""
    if event.get("hook_event_name") != "PreToolUse" or event.get("tool_name") != "Bash":
        return {}
    tool_input = event.get("tool_input") or {}
    command = str(tool_input.get("command", ""))
    decision: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if RM_RF.search(command):
        decision.update(permissionDecision="deny", permissionDecisionReason=deny_reason(command))
        return {"hookSpecificOutput": decision}
    safer = FORCE_PUSH.sub(r"\1 --force-with-lease", command)
    if safer == command:
        return {}
    decision["updatedInput"] = {**tool_input, "command": safer}
    return {"hookSpecificOutput": decision, "systemMessage": REWRITTEN}


def deny_reason(command: str) -> str:
    return f"policy: rm -rf is not allowed ({command})"


class PolicyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: hookgate pools its connections
    token: str | None = None

    def do_POST(self) -> None:
        if self.token and not hmac.compare_digest(
            self.headers.get("Authorization", ""), f"Bearer {self.token}"
        ):
            self._send(401, {"error": "missing or wrong bearer token"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY:
            self._send(400, {"error": "expected a JSON event"})
            return
        try:
            event = json.loads(self.rfile.read(length))
        except ValueError:
            self._send(400, {"error": "the body is not JSON"})
            return
        reply = decide(event) if isinstance(event, dict) else {}
        self._send(200, reply)

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"policy: {self.address_string()} {format % args}\n")


def make_server(host: str, port: int, token: str | None) -> ThreadingHTTPServer:
    """The service, bound but not yet serving (`serve_forever()` runs it)."""
    handler = type("Handler", (PolicyHandler,), {"token": token})
    return ThreadingHTTPServer((host, port), handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8787)
    args = parser.parse_args()
    server = make_server(args.host, args.port, os.environ.get("POLICY_TOKEN") or None)
    print(f"policy service on http://{args.host}:{server.server_address[1]}/hook", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C stops it quietly
        server.serve_forever()


if __name__ == "__main__":
    main()
