"""Reply formats by name: how each hook protocol writes events and reads replies."""

from __future__ import annotations

from hookgate.hooks.formats.base import ALLOW, BadReply, HookReply, ReplyFormat
from hookgate.hooks.formats.mecatl import MecatlFormat
from hookgate.hooks.formats.native import NativeFormat, reply_from_json

FORMATS: dict[str, ReplyFormat] = {
    "native": NativeFormat(),
    "mecatl": MecatlFormat(),
}

__all__ = ["ALLOW", "FORMATS", "BadReply", "HookReply", "ReplyFormat", "reply_from_json"]
