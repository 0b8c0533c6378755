"""The thin hook command for the resident hookgate: `python -m hookgate.agents.relay
AGENT [--agent FILE]`, which `hookgate install AGENT --resident` writes.

It imports next to nothing: it hands the agent's event (stdin, with the environment the
hooks must see) to the resident hookgate over its Unix socket and prints the answer.
Where no resident answers, it starts one for the next event and answers this one
itself, exactly as `hookgate hook AGENT` would: correct with or without the resident.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from typing import Any

from hookgate.home import default_home

#: The socket (and the lock the resident holds) under `$HOOKGATE_HOME`.
RESIDENT_DIR = "resident"
SOCKET_NAME = "hookgate.sock"
#: Seconds the relay waits for the resident's answer before answering itself: hooks
#: have timeouts of their own, up to 10 minutes (Claude Code's longest wait).
ANSWER_TIMEOUT = 660.0
#: Bytes the answer may take (an agent's reply is small; a hook's output is capped).
MAX_ANSWER = 16 * 1024 * 1024


def socket_path(home: str | None = None) -> str:
    return os.path.join(home or str(default_home()), RESIDENT_DIR, SOCKET_NAME)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or (len(args) not in (1, 3)) or (len(args) == 3 and args[1] != "--agent"):
        print("usage: python -m hookgate.agents.relay AGENT [--agent FILE]", file=sys.stderr)
        return 2
    agent, agent_file = args[0], (os.path.abspath(args[2]) if len(args) == 3 else None)
    text = sys.stdin.read()
    request = {"agent": agent, "agent_file": agent_file, "stdin": text,
               "environ": dict(os.environ), "cwd": os.getcwd()}  # fmt: skip
    answer = _ask_resident(json.dumps(request).encode())
    if answer is None:
        _start_resident()
        answer = _answer_here(agent, agent_file, text)
    sys.stdout.write(answer.get("stdout", ""))
    sys.stderr.write(answer.get("stderr", ""))
    return int(answer.get("exit_code", 0))


def _ask_resident(request: bytes) -> dict[str, Any] | None:
    """The resident's answer, or None where there is none to ask (or it failed)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(ANSWER_TIMEOUT)
            client.connect(socket_path())
            client.sendall(request)
            client.shutdown(socket.SHUT_WR)
            chunks, size = [], 0
            while chunk := client.recv(65536):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_ANSWER:
                    return None
        answer = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


def _start_resident() -> None:
    """Start the resident in a session of its own, detached from the agent's pipes."""
    import subprocess

    with contextlib.suppress(OSError):  # this event is answered here all the same
        subprocess.Popen(
            [sys.executable, "-m", "hookgate.agents.resident"], start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip


def _answer_here(agent: str, agent_file: str | None, text: str) -> dict[str, Any]:
    from hookgate.agents.resident import answer

    return answer(agent, agent_file, text, dict(os.environ))


if __name__ == "__main__":
    sys.exit(main())
