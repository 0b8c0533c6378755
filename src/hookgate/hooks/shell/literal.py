"""A word of a bash line as the shell passes it on (quotes and escapes removed), read
from tree-sitter's nodes: `word_value` where it expands no parameter or command,
`literal` where it expands nothing at all (no glob, brace or tilde either); `node_text`
a node as written.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

_ESCAPED = re.compile(r"\\(.)", re.DOTALL)
#: In the unquoted parts of a word: a glob, a brace expansion, or a tilde to expand.
_GLOB = re.compile(r"[*?]|\[.*\]|\{[^{}]*(,|\.\.)[^{}]*\}|^~|^[A-Za-z_]\w*=(?:[^:]*:)*~")
#: What stands for a quoted part of a word when its unquoted parts are checked.
_QUOTED = "\x00"
#: One escape of a `$'…'` string as bash reads it: octal takes 1 to 3 digits, `\x` 1 to
#: 2 hex digits, `\u` 1 to 4, `\U` 1 to 8, `\c` the character after it (`\c\\` one).
_ANSI_C_ESCAPE = re.compile(
    r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})"
    r"|c(\\\\|[\x21-\x7e])|(.))",
    re.DOTALL,
)
#: The single-character escapes of `$'…'`; bash keeps any other backslash as written.
_ANSI_C_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


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
        return ansi_c_value(text[2:-1])
    if node.type == "command_name":
        return _joined(node.children, source)
    if node.type == "string":
        return _joined(node.children[1:-1], source)
    if node.type == "string_content":
        return re.sub(r"\\([$`\"\\\n])", r"\1", text)
    if node.type == "concatenation":
        return _joined(node.children, source)
    return None


def ansi_c_value(body: str) -> str | None:
    """The text of `$'body'` as bash expands it, cut at its first NUL as bash cuts it
    (`$'rm\\0zz'` is `rm`); None where bash's result hangs on the locale (a `\\u`
    past ASCII) or on its version (a bare `\\x`, `\\u`, `\\c`)."""
    out: list[str] = []
    position = 0
    for match in _ANSI_C_ESCAPE.finditer(body):
        out.append(body[position : match.start()])
        position = match.end()
        octal, hexa, short, long, control, other = match.groups()
        if octal is not None:
            out.append(chr(int(octal, 8) & 0xFF))
        elif hexa is not None:
            out.append(chr(int(hexa, 16)))
        elif short is not None or long is not None:
            code = int(short or long, 16)
            if code >= 0x80:
                return None
            out.append(chr(code))
        elif control is not None:
            out.append("\x7f" if control == "?" else chr(ord(control[0].upper()) & 0x1F))
        elif other in ("x", "u", "U", "c"):
            return None
        else:
            out.append(_ANSI_C_SIMPLE.get(other, "\\" + other))
    out.append(body[position:])
    return "".join(out).partition("\x00")[0]


def _joined(nodes: list[Node], source: str) -> str | None:
    values = [word_value(node, source) for node in nodes]
    return None if None in values else "".join(v for v in values if v is not None)


def node_text(node: Node, source: str) -> str:
    # The tree was parsed from `source` with one ASCII byte per character (see
    # `words._walk_line`), so its byte offsets are `source`'s character offsets.
    return source[node.start_byte : node.end_byte].strip()
