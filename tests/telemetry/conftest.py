"""The runtime tests' empty project, here too."""

from runtime.conftest import project

__all__ = ["project"]
