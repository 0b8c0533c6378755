"""The OS sandbox of the model's commands: the `sandbox:` settings, the one table of
boundaries the file tools and the sandbox share, and bubblewrap, which enforces it
(with Landlock's scopes for what no mount holds: `landlock`).

The boundary does not depend on reading the command: whatever a command line builds at
run time, the kernel holds it to the same mounts and namespaces (docs/security.md).
"""

from __future__ import annotations

from hookgate.tools.sandbox.settings import Mode, SandboxSettings, parse_sandbox

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hookgate.tools.sandbox.boundaries import Boundaries, within


def __getattr__(name: str) -> Any:
    # Reading an agent file needs the settings alone (`hooks fire`); the boundaries are
    # for a session's tools, and `bwrap` (confine, probe) for a command being confined.
    if name in ("Boundaries", "within"):
        from hookgate.tools.sandbox import boundaries

        return getattr(boundaries, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Boundaries", "Mode", "SandboxSettings", "parse_sandbox", "within"]
