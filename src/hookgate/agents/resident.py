"""The resident hookgate: one process per `$HOOKGATE_HOME` that answers agents' hook
events over a Unix socket, so that an event costs a thin client's start and not
hookgate's (`relay`). Both ends speak `marshal` (the same interpreter runs both).

The socket lies in a directory only its owner may enter and answers only its owner's
processes (checked by the peer's credentials). Each event is answered exactly as
`hookgate hook AGENT` answers it, trust checked again for every event (an edited
`hookgate.yaml` fails closed at once), with the environment the relay sent. Events are
answered one at a time. It ends after `IDLE_EXIT` seconds without an event, or on
SIGTERM; a second one started meanwhile sees the lock held and ends. The lock file
holds the resident's pid.
"""

from __future__ import annotations

import contextlib
import fcntl
import marshal
import os
import signal
import socket
import struct
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hookgate.agents.relay import RESIDENT_DIR, socket_path
from hookgate.store.home import CACHE_DIR, default_home

#: Seconds without an event after which the resident ends.
IDLE_EXIT = float(os.environ.get("HOOKGATE_RESIDENT_IDLE", "600"))
#: Seconds one client may take to send its event.
READ_TIMEOUT = 10.0
#: Bytes one event may take.
MAX_REQUEST = 16 * 1024 * 1024
_PEER = struct.Struct("3i")  # struct ucred: pid, uid, gid


def answer(
    agent: str, agent_file: str | None, text: str, environ: Mapping[str, str]
) -> dict[str, Any]:
    """`hookgate hook AGENT`'s answer to the event `text`, as a JSON-ready mapping."""
    from hookgate.agents.cli import protocol_of
    from hookgate.agents.hookrun import run_agent_hook

    reply = run_agent_hook(protocol_of(agent), text,
                           agent_file=Path(agent_file) if agent_file else None, environ=environ)  # fmt: skip
    return {"stdout": reply.stdout, "stderr": reply.stderr, "exit_code": reply.exit_code}


def serve() -> int:
    home = default_home()
    directory = home / RESIDENT_DIR
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    lock = os.open(directory / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another resident serves this home
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())  # who serves, for `kill` and the curious
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # ends through the clean-up below
    prepare(home)
    path = socket_path(str(home))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # a resident that ended without cleaning up
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        os.chmod(path, 0o600)
        server.listen(16)
        server.settimeout(IDLE_EXIT)
        try:
            while True:
                try:
                    client, _ = server.accept()
                except TimeoutError:
                    return 0
                with client:
                    _serve_one(client)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def prepare(home: Path) -> None:
    """What `hookgate`'s own start does: the parse cache, orphans adopted at first start."""
    from hookgate.hooks.files import parsecache
    from hookgate.hooks.process import adopt_orphans_at_first_start

    adopt_orphans_at_first_start()
    parsecache.enable(home / CACHE_DIR)


def _serve_one(client: socket.socket) -> None:
    _, uid, _ = _PEER.unpack(client.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEER.size))
    if uid != os.getuid():
        return  # the directory should have kept it out; answer no one else
    client.settimeout(READ_TIMEOUT)
    chunks, size = [], 0
    try:
        while chunk := client.recv(65536):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_REQUEST:
                return
        request = marshal.loads(b"".join(chunks))
        reply = answer(str(request["agent"]), request.get("agent_file"), str(request["stdin"]),
                       {str(k): str(v) for k, v in dict(request["environ"]).items()})  # fmt: skip
        client.sendall(marshal.dumps(reply))
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return  # the relay then answers the event itself


if __name__ == "__main__":
    sys.exit(serve())
