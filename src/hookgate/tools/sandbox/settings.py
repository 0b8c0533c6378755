"""The agent file's `sandbox:` key: how tightly the kernel confines the model's commands.

`mode: workspace-write` (the default) lets a command write only under the workspace,
the `writable:` dirs and a private temporary directory; `read-only` only there in the
temporary directory; `off` runs commands unconfined. `network: false` (the default)
gives them no network at all, loopback included. Parsed strictly, like every key.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from pathlib import Path

from hookgate.hooks.files.yamlfile import Where, describe, did_you_mean
from hookgate.hooks.records import NamedTuple
from hookgate.tools.settings import directories, section

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SANDBOX_KEYS = ("mode", "network", "writable")


class Mode(Enum):
    """How much of the file system a confined command may write, strictest first."""

    READ_ONLY = "read-only"
    WORKSPACE_WRITE = "workspace-write"
    OFF = "off"

    @property
    def looseness(self) -> int:
        """0 for the strictest mode: a child agent runs at most as loose as its parent."""
        return list(Mode).index(self)


class SandboxSettings(NamedTuple):
    """`sandbox:` as the agent file says it; `Boundaries` adds where the session runs."""

    mode: Mode = Mode.WORKSPACE_WRITE
    network: bool = False
    """Whether confined commands may open network connections (loopback included)."""
    writable: tuple[Path, ...] = ()
    """Resolved directories writable beyond the workspace (`workspace.dirs` included)."""
    ceiling: tuple[Path, ...] | None = None
    """What an asking agent could write: nothing outside it is writable here (None: no
    asker, or one without a sandbox)."""

    @property
    def on(self) -> bool:
        return self.mode is not Mode.OFF

    def within(self, floor: SandboxSettings) -> SandboxSettings:
        """These settings, made no looser than `floor`, an asking agent's sandbox.

        The stricter mode and network, and `floor`'s writable dirs as the ceiling of
        what may be written here. A floor with the sandbox off imposes nothing.
        """
        if not floor.on:
            return self
        mode = min(self.mode, floor.mode, key=lambda mode: mode.looseness)
        return SandboxSettings(mode, self.network and floor.network, self.writable, floor.writable)

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "network": self.network,
            "writable": [str(path) for path in self.writable],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SandboxSettings:
        """The inverse of `to_json`; raises `ValueError`, `KeyError` or `TypeError` on
        another shape."""
        writable = data["writable"]
        if not isinstance(data["network"], bool) or not isinstance(writable, list):
            raise ValueError(f"not a sandbox: {data!r}")
        return cls(Mode(data["mode"]), data["network"], tuple(Path(p) for p in writable))


def parse_sandbox(document: Mapping[Any, Any], where: Where, base_dir: Path) -> SandboxSettings:
    """`sandbox: {mode, network, writable}`; relative `writable` dirs start at `base_dir`."""
    if (found := section(document, where, "sandbox", SANDBOX_KEYS)) is None:
        return SandboxSettings()
    node, at = found
    mode = node.get("mode", Mode.WORKSPACE_WRITE.value)
    modes = [m.value for m in Mode]
    if mode not in modes:
        suggestion = did_you_mean(str(mode), modes)
        raise at.key(node, "mode").error(
            f"expected one of {', '.join(modes)}, got {describe(mode)}",
            hint=suggestion or "the default is workspace-write",
        )
    network = node.get("network", False)
    if not isinstance(network, bool):
        raise at.key(node, "network").error(f"expected true or false, got {describe(network)}")
    return SandboxSettings(Mode(mode), network, directories(node, at, "writable", base_dir))


#: The variable an agent passes its sandbox down in, to the agents it asks: a child
#: never runs looser than its parent (`SandboxSettings.within`).
FLOOR_ENV = "HOOKGATE_SANDBOX_FLOOR"
#: What a floor that cannot be read stands for: the strictest sandbox there is.
STRICTEST = SandboxSettings(Mode.READ_ONLY, network=False, writable=())


def inherited(own: SandboxSettings, environ: Mapping[str, str]) -> SandboxSettings:
    """`own`, held within the floor a parent agent set in `environ`, if any.

    A floor that cannot be read is taken as the strictest: it fails closed.
    """
    text = environ.get(FLOOR_ENV)
    if text is None:
        return own
    import json

    try:
        floor = SandboxSettings.from_json(json.loads(text))
    except (ValueError, KeyError, TypeError):
        floor = STRICTEST
    return own.within(floor)


def floor_env(sandbox: SandboxSettings, writable: tuple[Path, ...]) -> dict[str, str]:
    """The variables that hold the agents this one asks within its sandbox, whose
    commands may write `writable` (the session's boundaries, its private tmp aside)."""
    import json

    floor = sandbox._replace(writable=writable, ceiling=None)
    return {FLOOR_ENV: json.dumps(floor.to_json())} if sandbox.on else {}
