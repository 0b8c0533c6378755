"""The thin hook command for the resident hookgate: `PYTHON -S .../hookgate/agents/relay.py
AGENT [--agent FILE]`, which `hookgate install AGENT --resident` writes.

It imports nothing but built-in modules (`-S`: not even `site`): it hands the agent's
event (stdin, with the environment the hooks must see) to the resident hookgate over
its Unix socket, as `marshal` data (the resident answers only its own user), and prints
the answer. Where no resident answers, it loads hookgate, starts a resident for the
next event and answers this one itself, exactly as `hookgate hook AGENT` would:
correct with or without the resident.
"""

from __future__ import annotations

import _socket
import marshal
import os
import sys

#: The socket (and the lock the resident holds) under `$HOOKGATE_HOME`.
RESIDENT_DIR = "resident"
SOCKET_NAME = "hookgate.sock"
#: Seconds the relay waits for the resident's answer before answering itself: hooks
#: have timeouts of their own, up to 10 minutes (Claude Code's longest wait).
ANSWER_TIMEOUT = 660.0
#: Bytes the answer may take (an agent's reply is small; a hook's output is capped).
MAX_ANSWER = 16 * 1024 * 1024
#: The longest socket path the kernel binds (`sun_path` holds 108 bytes, the last NUL):
#: a home deeper than that has no resident, and the relay answers every event itself.
MAX_SOCKET_PATH = 107
USAGE = "usage: PYTHON -S relay.py AGENT [--agent FILE]"


def home_directory(env: dict[str, str] | os._Environ[str]) -> str:
    """`hookgate.store.home.default_home`, without pathlib (a test holds the two equal)."""
    if env.get("HOOKGATE_HOME"):
        return os.path.expanduser(env["HOOKGATE_HOME"])
    state = env.get("XDG_STATE_HOME", "")
    if os.path.isabs(state):
        return os.path.join(state, "hookgate")
    return os.path.join(os.path.expanduser("~"), ".local", "state", "hookgate")


def socket_path(home: str | None = None) -> str:
    return os.path.join(home or home_directory(os.environ), RESIDENT_DIR, SOCKET_NAME)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--agent"):
        sys.stderr.write(USAGE + "\n")
        return 2
    agent, agent_file = args[0], (os.path.abspath(args[2]) if len(args) == 3 else None)
    text = sys.stdin.read()
    request = {"agent": agent, "agent_file": agent_file, "stdin": text,
               "environ": dict(os.environ)}  # fmt: skip
    answer = _ask_resident(marshal.dumps(request))
    if answer is None:
        answer = _answer_here(agent, agent_file, text)
    sys.stdout.write(str(answer.get("stdout", "")))
    sys.stderr.write(str(answer.get("stderr", "")))
    exit_code = answer.get("exit_code", 0)
    return exit_code if isinstance(exit_code, int) else 1


def _ask_resident(request: bytes) -> dict[str, object] | None:
    """The resident's answer, or None where there is none to ask (or it failed)."""
    client = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        client.settimeout(ANSWER_TIMEOUT)
        client.connect(socket_path())
        client.sendall(request)
        client.shutdown(_socket.SHUT_WR)
        chunks, size = [], 0
        while chunk := client.recv(65536):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_ANSWER:
                return None
        answer = marshal.loads(b"".join(chunks))
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:
        client.close()
    return answer if isinstance(answer, dict) else None


def _answer_here(agent: str, agent_file: str | None, text: str) -> dict[str, object]:
    """Load hookgate (run with `-S`: its site-packages first), start the resident for
    the next event, and answer this one."""
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # run as a script: our own folder must not shadow anything
    import site

    site.main()
    import contextlib
    import subprocess

    starts = len(os.fsencode(socket_path())) <= MAX_SOCKET_PATH
    with contextlib.suppress(OSError):  # this event is answered here all the same
        if starts:
            subprocess.Popen(
                [sys.executable, "-m", "hookgate.agents.resident"], start_new_session=True,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
    from hookgate.agents.resident import answer, prepare
    from hookgate.store.home import default_home

    prepare(default_home())  # as `hookgate hook` starts
    return answer(agent, agent_file, text, dict(os.environ))


if __name__ == "__main__":
    sys.exit(main())
