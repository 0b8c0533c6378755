"""Answers as HTML: markdown rendered on the server, code blocks highlighted by Pygments.

Raw HTML in an answer is escaped, never passed through (the model's text is data, not
markup), and links keep markdown-it's own check (no `javascript:` URLs).
"""

from __future__ import annotations

from functools import cache, lru_cache

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

#: Where Pygments' token spans are on the page: in markdown-it's `<pre><code>`.
CODE_SELECTOR = "pre code"


def render_markdown(text: str) -> str:
    """The HTML of `text` as markdown; safe to insert into the page as it is."""
    return str(_markdown().render(text))


def code_css() -> str:
    """The stylesheet of the highlighted code's token classes."""
    return str(HtmlFormatter(style="default").get_style_defs(CODE_SELECTOR))


@cache
def _markdown() -> MarkdownIt:
    # "js-default": CommonMark with raw HTML off, plus tables and strikethrough.
    return MarkdownIt("js-default", {"highlight": _highlight})


#: Highlighted code blocks kept: a streaming answer is rendered again at each piece, and
#: its finished blocks are the same each time.
HIGHLIGHT_CACHE = 256


@lru_cache(maxsize=HIGHLIGHT_CACHE)
def _highlight(code: str, language: str, attributes: str) -> str:
    """A fenced block as Pygments' spans, which markdown-it puts in `<pre><code>`; ""
    (markdown-it escapes the code as it is) for no language or an unknown one."""
    try:
        lexer = get_lexer_by_name(language.strip())
    except ClassNotFound:
        return ""
    return str(highlight(code, lexer, HtmlFormatter(nowrap=True)))
