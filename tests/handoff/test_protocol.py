"""The hand-off stream: what the asked agent writes is what the asker reads, and
nothing else is believed."""

from __future__ import annotations

import io

import pytest

from hookgate.handoff.protocol import Final, StreamReader, StreamWriter


def reader() -> tuple[StreamReader, list[str], list[str]]:
    texts: list[str] = []
    notices: list[str] = []
    return StreamReader(texts.append, notices.append), texts, notices


@pytest.mark.parametrize("final", [
    Final("answer", "The answer\nover two lines, with ünïcödé and \udcff"),
    Final("answer", "Plan A.", session="20261130-170000-ab12cd"),
    Final("blocked", "The hook's response.", "no keys"),
    Final("failed", "the model is overloaded"),
])  # fmt: skip
def test_what_is_written_is_what_is_read_whatever_the_chunking(final: Final) -> None:
    buffer = io.BytesIO()
    writer = StreamWriter(buffer)
    writer.text("Hel")
    writer.notice("a hook said something")
    writer.text("lo")
    writer.final(final)
    stream, (read, texts, notices) = buffer.getvalue(), reader()

    for index in range(len(stream)):  # one byte at a time: lines cut anywhere
        read.feed(stream[index : index + 1])
    read.close()

    assert (texts, notices, read.error) == (["Hel", "lo"], ["a hook said something"], None)
    assert read.final == final  # a lone surrogate too: it travels as its JSON escape


@pytest.mark.parametrize(("line", "what"), [
    (b"plain text\n", "not JSON"),
    (b'["a list"]\n', "not a hand-off record"),
    (b'{"type": "text", "delta": 3}\n', "not a hand-off record"),
    (b'{"type": "shout", "text": "hi"}\n', "not a hand-off record"),
    (b"\xff\xfe\n", "not JSON"),
])  # fmt: skip
def test_a_bad_line_is_an_error_and_nothing_after_it_is_believed(line: bytes, what: str) -> None:
    read, texts, _ = reader()

    read.feed(line + b'{"type": "text", "delta": "after"}\n{"type": "answer", "text": "x"}\n')

    assert read.error is not None
    assert what in read.error
    assert (texts, read.final) == ([], None)


def test_a_line_after_the_final_one_is_an_error() -> None:
    read, _, _ = reader()

    read.feed(b'{"type": "answer", "text": "x"}\n{"type": "text", "delta": "more"}\n')

    assert read.error is not None
    assert "a line after the final one" in read.error


def test_a_writer_whose_reader_is_gone_stays_quiet() -> None:
    stream = io.BytesIO()
    writer = StreamWriter(stream)
    stream.close()

    writer.text("nobody listens")  # no exception: the turn ends normally
    writer.final(Final("answer", "still fine"))
