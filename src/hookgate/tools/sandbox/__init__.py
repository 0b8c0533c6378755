"""The OS sandbox of the model's commands: the `sandbox:` settings, the one table of
boundaries the file tools and the sandbox share, and bubblewrap, which enforces it.

The boundary does not depend on reading the command: whatever a command line builds at
run time, the kernel holds it to the same mounts and namespaces (docs/security.md).
"""

from hookgate.tools.sandbox.boundaries import Boundaries, within
from hookgate.tools.sandbox.settings import Mode, SandboxSettings, parse_sandbox

# `hookgate.tools.sandbox.bwrap` (confine, probe) is imported where a command is confined:
# reading an agent file needs the settings alone.
__all__ = ["Boundaries", "Mode", "SandboxSettings", "parse_sandbox", "within"]
