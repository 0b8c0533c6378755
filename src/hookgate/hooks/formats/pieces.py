"""A large event as JSON in pieces: encoded once, written as it is made, never held whole.

An event that holds a text of `BIG` characters or more (a tool's 50 MB result) is
encoded a slice at a time: the bytes a process hook reads are the same as
`json.dumps(value, ensure_ascii=False, separators=(",", ":"))` encoded to UTF-8 with
lone surrogates escaped (what the native and claude formats write), but no more than
about `PIECE` characters of them exist at once, besides the event itself. Smaller
events are not looked at twice: `has_big_text` answers in about a microsecond.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hookgate.hooks.formats.base import BIG, has_big_text

#: Characters encoded at a time: a pipe's worth (64 KiB) or so per write.
PIECE = 64 * 1024

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_escape = json.encoder.encode_basestring  # a text with its quotes, non-ASCII kept


def json_pieces(value: Any) -> Iterator[bytes]:
    """`value` as compact JSON in UTF-8 (lone surrogates as `\\udcXX`), in pieces of about
    `PIECE` bytes, made as they are asked for."""
    held: list[str] = []
    size = 0
    for text in _texts(value):
        held.append(text)
        size += len(text)
        if size >= PIECE:
            yield "".join(held).encode("utf-8", "backslashreplace")
            held.clear()
            size = 0
    if held:
        yield "".join(held).encode("utf-8", "backslashreplace")


def _texts(value: Any) -> Iterator[str]:
    """`value`'s JSON text, in parts: a big text in slices, small parts whole."""
    kind = type(value)
    if kind is str and len(value) >= BIG:
        yield '"'
        for start in range(0, len(value), PIECE):
            yield _escape(value[start : start + PIECE])[1:-1]
        yield '"'
    elif kind is dict and has_big_text(value):
        yield "{"
        for number, (key, item) in enumerate(value.items()):
            # The key as json.dumps writes it (a number or a bool as a string too),
            # from a one-item object: `{"key":0}` less `{` and `0}`.
            yield ("," if number else "") + _COMPACT.encode({key: 0})[1:-2]
            yield from _texts(item)
        yield "}"
    elif (kind is list or kind is tuple) and has_big_text(value):
        yield "["
        for number, item in enumerate(value):
            if number:
                yield ","
            yield from _texts(item)
        yield "]"
    else:
        yield _COMPACT.encode(value)
