"""What an answer may become on the page: markdown and highlighted code, never markup."""

from __future__ import annotations

import pytest

from hookgate.frontends.window.render import render_markdown


@pytest.mark.parametrize(
    ("answer", "absent"),
    [
        ("<script>alert(1)</script>", "<script"),
        ('<img src=x onerror="alert(1)">', "<img"),
        ("[click](javascript:alert(1))", 'href="javascript:'),
        ("[click](JaVaScRiPt:alert(1))", 'href="JaVaScRiPt:'),
        ("![x](data:text/html;base64,PHNjcmlwdD4=)", 'src="data:text/html'),
    ],
)
def test_markup_in_an_answer_is_shown_not_obeyed(answer: str, absent: str) -> None:
    assert absent not in render_markdown(answer)


def test_code_blocks_are_highlighted_and_unknown_languages_escaped() -> None:
    html = render_markdown("```python\nx = '<b>'\n```\n\n```nosuchlanguage\n<b>\n```")

    assert '<code class="language-python"><span class="n">x</span>' in html
    assert "&lt;b&gt;" in html
    assert "<b>" not in html
