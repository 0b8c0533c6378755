"""What `hookgate hooks check` says of an agent file's sandbox on this machine."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks import HookgateError
from hookgate.hooks.files.yamlfile import Where, load_yaml
from hookgate.tools.sandbox import landlock
from hookgate.tools.sandbox.probe import NAMESPACES, probe
from hookgate.tools.sandbox.settings import Mode, parse_sandbox

#: What a working sandbox enforces, in the words docs/security.md uses.
ENFORCED = (
    "writes only under the workspace, the writable dirs and a private temporary directory",
    "trusted files read-only, their folders fixed in place",
    "what programs outside the sandbox run read-only: .git, editor and agent CLI settings, "
    "shell start-up files, the packages hooks run from, PATH directories",
    "$HOOKGATE_HOME and the hidden paths out of reach",
    "the sockets in /run and /tmp out of reach (docker's, D-Bus's, tmux's, ssh-agent's, "
    "the display server's), network or not",
    "hookgate's processes and environment out of sight (own /proc)",
)


def sandbox_report(path: Path) -> tuple[list[str], list[str]]:
    """Lines describing `path`'s sandbox and what this machine enforces; and warnings.

    A file of hooks alone has no sandbox: nothing to say.
    """
    try:
        document = load_yaml(path)
    except HookgateError:
        return [], []
    if not isinstance(document, Mapping) or "model" not in document:
        return [], []
    sandbox = parse_sandbox(document, Where(str(path)), path.resolve().parent)
    if not sandbox.on:
        return ["sandbox: off (the model's commands run unconfined)"], []
    network = "on" if sandbox.network else "off (loopback included)"
    lines = [f"sandbox: {sandbox.mode.value}, network {network}"]
    if sandbox.mode is Mode.READ_ONLY:
        lines.append("  the workspace is read-only too")
    lines += [f"  writable too: {d}" for d in sandbox.writable]
    hidden = [str(path) for path in sandbox.hidden_paths()]
    lines.append(f"  hidden from commands and file tools: {', '.join(hidden) or 'nothing'}")
    problem = probe()
    if problem is not None:
        return lines, [
            f"this machine cannot confine commands: {problem}; sessions of this file refuse "
            "to start (or set sandbox: {mode: off})"
        ]
    lines.append(f"  this machine enforces it (bubblewrap: {' '.join(NAMESPACES)}):")
    lines += [f"    - {item}" for item in ENFORCED]
    if not sandbox.network:
        lines.append("    - no network, loopback included")
    version = landlock.abi()
    if version >= landlock.SCOPES_ABI:
        lines.append(
            f"    - abstract Unix sockets and processes outside out of reach (Landlock ABI {version})"
        )
    elif sandbox.network:
        lines.append(
            "  not enforced here: abstract Unix sockets outside the sandbox (X11's, a container "
            f"runtime's) stay in reach with network on: this kernel's Landlock (ABI {version}) "
            f"has no scopes (ABI {landlock.SCOPES_ABI}, Linux 6.12)"
        )
    return lines, []
