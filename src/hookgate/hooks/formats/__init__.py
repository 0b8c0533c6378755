"""Reply formats by name: how each hook protocol writes events and reads replies."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hookgate.hooks.formats.base import ALLOW, BadReply, HookReply, Permission, ReplyFormat
from hookgate.hooks.formats.native import reply_from_json


class _Formats(Mapping[str, ReplyFormat]):
    """The formats by name, each built (its module imported) when first asked for: a
    file of native hooks does not import Claude Code's tool tables."""

    def __init__(self) -> None:
        self._classes = {
            "native": ("hookgate.hooks.formats.native", "NativeFormat"),
            "mecatl": ("hookgate.hooks.formats.mecatl", "MecatlFormat"),
            "claude": ("hookgate.hooks.formats.claude", "ClaudeFormat"),
        }
        self._built: dict[str, ReplyFormat] = {}

    def __getitem__(self, name: str) -> ReplyFormat:
        built = self._built.get(name)
        if built is None:
            module, cls = self._classes[name]  # KeyError: no such format
            # __import__: importlib's package is ~0.6 M instructions of a `hooks fire`
            built = self._built[name] = getattr(__import__(module, fromlist=[cls]), cls)()
        return built

    def __iter__(self) -> Iterator[str]:
        return iter(self._classes)

    def __len__(self) -> int:
        return len(self._classes)


FORMATS: Mapping[str, ReplyFormat] = _Formats()

__all__ = [
    "ALLOW",
    "FORMATS",
    "BadReply",
    "HookReply",
    "Permission",
    "ReplyFormat",
    "reply_from_json",
]
