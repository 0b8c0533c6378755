"""The agent file's `sandbox:` key: how tightly the kernel confines the model's commands.

`mode: workspace-write` (the default) lets a command write only under the workspace,
the `writable:` dirs and a private temporary directory; `read-only` only there in the
temporary directory; `off` runs commands unconfined. `network: false` (the default)
gives them no network at all, loopback included. `hidden:` names what neither a
command nor a file tool reads: by default the usual stores of the user's credentials
(`DEFAULT_HIDDEN`). Parsed strictly, like every key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import Enum
from pathlib import Path

from hookgate.hooks.files.yamlfile import Where, describe, did_you_mean
from hookgate.hooks.records import NamedTuple
from hookgate.tools.settings import directories, section

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SANDBOX_KEYS = ("mode", "network", "writable", "hidden")
#: What the model's commands and file tools never read unless `hidden:` says otherwise:
#: where the user's keys and tokens for other machines live (SSH's keys and the sockets
#: of its shared connections, GnuPG's, the cloud CLIs', Kubernetes', Docker's with its
#: socket, GitHub CLI's, netrc, git's stored credentials, PostgreSQL's, PyPI's).
DEFAULT_HIDDEN = (
    "~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.docker",
    "~/.config/gh", "~/.netrc", "~/.git-credentials", "~/.pgpass", "~/.pypirc",
)  # fmt: skip


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
    hidden: tuple[Path, ...] | None = None
    """Paths (`~` and relative ones resolved) neither read nor written by a confined
    command or a file tool; None: `DEFAULT_HIDDEN` (`hidden_paths`)."""
    kept: tuple[Path, ...] = ()
    """What an asking agent keeps from its model, kept here too: the files and folders
    its hooks and servers run (its trust closure, the environments they run from), which
    its hooks run outside any sandbox after this agent's commands have ended."""

    @property
    def on(self) -> bool:
        return self.mode is not Mode.OFF

    def hidden_paths(self) -> tuple[Path, ...]:
        """What is hidden: `hidden`, or the default read in this user's home."""
        return self.hidden if self.hidden is not None else default_hidden()

    def within(self, floor: SandboxSettings) -> SandboxSettings:
        """These settings, made no looser than `floor`, an asking agent's sandbox.

        The stricter mode and network, and `floor`'s writable dirs as the ceiling of
        what may be written here. A floor with the sandbox off imposes nothing.
        """
        if not floor.on:
            return self
        mode = min(self.mode, floor.mode, key=lambda mode: mode.looseness)
        hidden = tuple(dict.fromkeys((*self.hidden_paths(), *floor.hidden_paths())))
        kept = tuple(dict.fromkeys((*self.kept, *floor.kept)))
        return SandboxSettings(
            mode, self.network and floor.network, self.writable, floor.writable, hidden, kept
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "network": self.network,
            "writable": [str(path) for path in self.writable],
            "hidden": [str(path) for path in self.hidden_paths()],
            "kept": [str(path) for path in self.kept],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SandboxSettings:
        """The inverse of `to_json`; raises `ValueError`, `KeyError` or `TypeError` on
        another shape."""
        writable, hidden, kept = data["writable"], data["hidden"], data["kept"]
        if not isinstance(data["network"], bool) or not isinstance(writable, list):
            raise ValueError(f"not a sandbox: {data!r}")
        for paths in (hidden, kept):
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                raise ValueError(f"not a sandbox: {data!r}")
        return cls(
            Mode(data["mode"]), data["network"], tuple(Path(p) for p in writable), None,
            tuple(Path(p) for p in hidden), tuple(Path(p) for p in kept),
        )  # fmt: skip


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
    writable = directories(node, at, "writable", base_dir)
    hidden = _hidden(node, at, base_dir, (base_dir, *writable)) if "hidden" in node else None
    return SandboxSettings(Mode(mode), network, writable, hidden=hidden)


def default_hidden() -> tuple[Path, ...]:
    """`DEFAULT_HIDDEN` in this user's home, links resolved (once per home: a session
    asks at its start and for each floor it passes down)."""
    home = os.path.expanduser("~")
    found = _DEFAULTS.get(home)
    if found is None:
        found = _DEFAULTS[home] = tuple(
            _resolved(Path(path).expanduser()) for path in DEFAULT_HIDDEN
        )
    return found


_DEFAULTS: dict[str, tuple[Path, ...]] = {}


def _hidden(
    node: Mapping[Any, Any], at: Where, base_dir: Path, kept: tuple[Path, ...]
) -> tuple[Path, ...]:
    """`hidden:`, a list of paths (present or not) from `base_dir`; none may hold the
    project or a writable dir, which a command must see."""
    paths = node["hidden"]
    here = at.key(node, "hidden")
    if not isinstance(paths, list):
        raise here.error(
            f"expected a list of paths, got {describe(paths)}", hint="hidden: [~/.ssh, .env]"
        )
    resolved: list[Path] = []
    for index, item in enumerate(paths):
        if not isinstance(item, str) or not item.strip() or "\x00" in item:
            raise here.item(paths, index).error(f"expected a path, got {describe(item)}")
        path = _resolved(base_dir / Path(item).expanduser())
        holds = next((d for d in kept if d == path or path in d.parents), None)
        if holds is not None:
            raise here.item(paths, index).error(
                f"{item!r} holds {holds}, which the model's commands must see",
                hint="hide what is inside it instead (a file, a folder of secrets)",
            )
        resolved.append(path)
    return tuple(resolved)


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


#: The variable an agent passes its sandbox down in, to the agents it asks: a child
#: never runs looser than its parent (`SandboxSettings.within`).
FLOOR_ENV = "HOOKGATE_SANDBOX_FLOOR"
#: What a floor that cannot be read stands for: the strictest sandbox there is.
STRICTEST = SandboxSettings(Mode.READ_ONLY, network=False, writable=())  # hidden: the default


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


def floor_env(
    sandbox: SandboxSettings, writable: tuple[Path, ...], kept: tuple[Path, ...]
) -> dict[str, str]:
    """The variables that hold the agents this one asks within its sandbox, whose
    commands may write `writable` (the session's boundaries, its private tmp aside) and
    never what this session keeps from its model (`kept`)."""
    import json

    floor = sandbox._replace(writable=writable, ceiling=None, kept=kept)
    return {FLOOR_ENV: json.dumps(floor.to_json())} if sandbox.on else {}
