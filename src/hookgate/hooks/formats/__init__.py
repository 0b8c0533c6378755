"""Reply formats by name: how each hook protocol writes events and reads replies."""

from __future__ import annotations

from hookgate.hooks.formats.base import ALLOW, BadReply, HookReply, Permission, ReplyFormat
from hookgate.hooks.formats.claude import ClaudeFormat
from hookgate.hooks.formats.mecatl import MecatlFormat
from hookgate.hooks.formats.native import NativeFormat, reply_from_json

FORMATS: dict[str, ReplyFormat] = {
    "native": NativeFormat(),
    "mecatl": MecatlFormat(),
    "claude": ClaudeFormat(),
}

__all__ = [
    "ALLOW",
    "FORMATS",
    "BadReply",
    "HookReply",
    "Permission",
    "ReplyFormat",
    "reply_from_json",
]
