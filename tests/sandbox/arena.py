"""An arena for hostile commands: a project, the world around it, and what must not change.

`Arena` lays out a trusted project (agent file, a guard script, a scripted model that
asks for one shell command under `yolo: true`), a directory outside it with a victim
file, a `$HOOKGATE_HOME` holding a canary, a secret in hookgate's own environment, and
loopback TCP and UDP listeners that count who reaches them. `run` plays one command
through a real `hookgate -p`; `breaches` lists every boundary the command crossed.
"""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runtime.project import Project

HOME_SECRET = "HOME-SECRET-4c1d"
CONTROL_SECRET = "CONTROL-READ-4c1d"
ENV_SECRET = "ENV-SECRET-9b1c"
GUARD = "#!/bin/sh\nexit 0\n"


class Listener:
    """A loopback TCP listener and a UDP socket, each counting what reaches it."""

    def __init__(self) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.connections = 0
        self.datagrams = 0
        self._threads = [
            threading.Thread(target=self._accept, daemon=True),
            threading.Thread(target=self._receive, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def port(self) -> int:
        return int(self.tcp.getsockname()[1])

    @property
    def udp_port(self) -> int:
        return int(self.udp.getsockname()[1])

    def reached(self) -> int:
        return self.connections + self.datagrams

    def reached_at_last(self, seconds: float = 30.0) -> int:
        """`reached()`, once a connection or datagram has been counted or `seconds` have
        passed: the kernel queues what arrives, the counting threads take it when they
        run, and a saturated machine may run them late."""
        deadline = time.monotonic() + seconds
        while not self.reached() and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.reached()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def _receive(self) -> None:
        while True:
            try:
                self.udp.recv(64)
            except OSError:
                return
            self.datagrams += 1

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()


def snapshot(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Every entry under `root` (`skip` aside): its kind, mode and content digest."""
    seen: dict[str, Any] = {}
    for path in sorted(root.rglob("*")):
        if any(path == s or path.is_relative_to(s) for s in skip):
            continue
        info = path.lstat()
        if path.is_symlink():
            seen[str(path)] = ("link", str(path.readlink()))
        elif path.is_dir():
            seen[str(path)] = ("dir", info.st_mode)
        else:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            seen[str(path)] = ("file", info.st_mode, digest)
    return seen


@dataclass
class Arena:
    root: Path
    listener: Listener
    sandbox: Mapping[str, Any] = field(default_factory=dict)

    @property
    def project(self) -> Project:
        return Project(self.root / "project", self.root / "home")

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    def lay_out(self) -> None:
        project = self.project
        for folder in ("hooks", "scripts", "scratch", "readable"):
            (project.dir / folder).mkdir(parents=True)
        project.home.mkdir()
        self.outside.mkdir()
        for victim in (self.outside / "victim", project.dir / "scratch" / "victim"):
            victim.write_text("VICTIM\n")
        (project.home / "canary.txt").write_text(HOME_SECRET)
        (project.dir / "readable" / "canary.txt").write_text(CONTROL_SECRET)
        for script in (project.dir / "hooks" / "guard.sh", project.dir / "scripts" / "other.sh"):
            script.write_text(GUARD)
            script.chmod(0o755)
        (project.dir / "other.yaml").write_text("model: x\n")

    def placeholders(self, *, control: bool) -> dict[str, str]:
        """What `@T@` (a dir to write), `@D@`/`@F@` (a trusted script), `@Y@` (the agent
        file), `@R@` (a dir to read) and the ports stand for: the hostile targets, or
        their counterparts inside the workspace for the control."""
        project = self.project
        return {
            "@T@": str(project.dir / "scratch" if control else self.outside),
            "@D@": "scripts" if control else "hooks",
            "@F@": "other.sh" if control else "guard.sh",
            "@Y@": "other.yaml" if control else "hookgate.yaml",
            "@R@": str(project.dir / "readable" if control else project.home),
            "@PORT@": str(self.listener.port),
            "@UPORT@": str(self.listener.udp_port),
        }

    def command(self, template: str, *, control: bool) -> str:
        for mark, value in self.placeholders(control=control).items():
            template = template.replace(mark, value)
        return template

    def prepare(self, command: str, **sandbox: Any) -> None:
        """Write the agent file and a model that asks for `command`, then stops."""
        project = self.project
        script = project.script(
            {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
            {"text": "done"},
        )
        project.write_agent(
            script, yolo=True, shell_timeout=20, sandbox={**self.sandbox, **sandbox},
            hooks={"preToolCall": [{"matcher": "^shell$", "command": "./hooks/guard.sh",
                                    "onError": "fail"}]},
        )  # fmt: skip

    def play(self) -> str:
        """Run `hookgate -p` on the prepared agent; everything the run wrote."""
        project = self.project
        done = project.hookgate("-p", "go", env=project.env(OPENAI_API_KEY=ENV_SECRET))
        assert done.stdout.strip() == "done", done.stderr
        return done.stdout + done.stderr + "".join(self._written())

    def _written(self) -> Iterator[str]:
        for path in self.project.files_under_home():
            if path.name != "canary.txt":
                yield path.read_text(errors="replace")

    def world(self) -> dict[str, Any]:
        """What no hostile command may change: all but the project's scratch space and
        hookgate's own writing (sessions under its home), plus the trusted files."""
        project = self.project
        skip = (project.home, project.dir)
        trusted = [project.dir / "hookgate.yaml", project.dir / "hooks"]
        return {
            "outside": snapshot(self.root, skip=skip),
            "trusted": {str(p): snapshot(p) if p.is_dir() else p.read_bytes() for p in trusted},
        }
