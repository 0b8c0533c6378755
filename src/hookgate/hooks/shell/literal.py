"""A word of a bash line as the shell passes it on (quotes and escapes removed), read
from tree-sitter's nodes: `word_value` where it expands no parameter or command,
`literal` where it expands nothing at all (no glob, brace or tilde either); `node_text`
a node as written.
"""

from __future__ import annotations

import codecs
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

_ESCAPED = re.compile(r"\\(.)", re.DOTALL)
#: In the unquoted parts of a word: a glob, a brace expansion, or a tilde to expand.
_GLOB = re.compile(r"[*?]|\[.*\]|\{[^{}]*(,|\.\.)[^{}]*\}|^~|^[A-Za-z_]\w*=(?:[^:]*:)*~")
#: What stands for a quoted part of a word when its unquoted parts are checked.
_QUOTED = "\x00"


def literal(node: Node, source: str) -> str | None:
    """A word's value when the shell expands nothing in it (no parameter, command,
    arithmetic, glob, brace or tilde expansion); else None."""
    value = word_value(node, source)
    if value is None:
        return None
    skeleton = _unquoted(node, source)
    return None if skeleton is not None and _GLOB.search(skeleton) else value


def _unquoted(node: Node, source: str) -> str | None:
    """A word's unquoted parts as written, each quoted part one `_QUOTED` character
    and escaped characters too: where globs, braces and tildes can be."""
    if node.type in ("word", "number"):
        return _ESCAPED.sub(_QUOTED, node_text(node, source))
    if node.type in ("concatenation", "command_name"):
        parts = [_unquoted(child, source) for child in node.children]
        return "".join(part if part is not None else _QUOTED for part in parts)
    return None


def word_value(node: Node, source: str) -> str | None:
    """A word as the shell passes it on, quotes and escapes removed; None if it expands."""
    text = node_text(node, source)
    if node.type in ("word", "number"):
        return _ESCAPED.sub(r"\1", text)
    if node.type == "raw_string":
        return text[1:-1]
    if node.type == "ansi_c_string":
        try:
            return codecs.decode(text[2:-1], "unicode_escape")
        except UnicodeError:
            return None
    if node.type == "command_name":
        return _joined(node.children, source)
    if node.type == "string":
        return _joined(node.children[1:-1], source)
    if node.type == "string_content":
        return re.sub(r"\\([$`\"\\\n])", r"\1", text)
    if node.type == "concatenation":
        return _joined(node.children, source)
    return None


def _joined(nodes: list[Node], source: str) -> str | None:
    values = [word_value(node, source) for node in nodes]
    return None if None in values else "".join(v for v in values if v is not None)


def node_text(node: Node, source: str) -> str:
    # The tree was parsed from `source` with one ASCII byte per character (see
    # `words._walk_line`), so its byte offsets are `source`'s character offsets.
    return source[node.start_byte : node.end_byte].strip()
