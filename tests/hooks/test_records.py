"""hookgate's `NamedTuple` makes the class typing's makes, from the same class body."""

from __future__ import annotations

import pickle
import typing

import pytest

from hookgate.hooks.records import NamedTuple


class Ours(NamedTuple):
    """A record."""

    name: str
    tags: tuple[str, ...] = ()
    """What it is tagged with."""
    seen: int = 0

    @property
    def tagged(self) -> bool:
        return bool(self.tags)

    def more(self) -> Ours:
        return self._replace(seen=self.seen + 1)


class Theirs(typing.NamedTuple):
    """A record."""

    name: str
    tags: tuple[str, ...] = ()
    """What it is tagged with."""
    seen: int = 0

    @property
    def tagged(self) -> bool:
        return bool(self.tags)

    def more(self) -> Theirs:
        return self._replace(seen=self.seen + 1)


@pytest.mark.parametrize("cls", [Ours, Theirs], ids=["ours", "typing's"])
def test_the_class_behaves_as_typings(cls: type[Ours]) -> None:
    record = cls("a", ("x",))

    assert issubclass(cls, tuple)
    assert (cls._fields, cls._field_defaults) == (
        ("name", "tags", "seen"),
        {"tags": (), "seen": 0},
    )
    plain: object = ("a", ("x",), 0)
    assert record == plain
    assert tuple(record) == ("a", ("x",), 0)
    assert hash(record) == hash(("a", ("x",), 0))
    assert repr(record) == f"{cls.__name__}(name='a', tags=('x',), seen=0)"
    assert record.tagged
    assert not cls("b").tagged
    assert record.more().seen == 1
    assert record.seen == 0
    assert record._asdict() == {"name": "a", "tags": ("x",), "seen": 0}
    assert cls._make(["c", (), 2]) == cls("c", seen=2)
    assert cls.__doc__ == "A record."
    assert (cls.__module__, cls.__qualname__) == (__name__, cls.__name__)
    assert pickle.loads(pickle.dumps(record)) == record
    name, *_ = record
    assert name == "a"
    with pytest.raises(AttributeError):
        record.name = "b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        cls()  # type: ignore[call-arg]


def test_annotations_stay_the_strings_written() -> None:
    assert Ours.__annotations__ == {"name": "str", "tags": "tuple[str, ...]", "seen": "int"}


@pytest.mark.parametrize("base", [NamedTuple, typing.NamedTuple], ids=["ours", "typing's"])
def test_a_field_without_a_default_after_one_with_is_refused_alike(base: type) -> None:
    with pytest.raises(
        TypeError, match="Non-default namedtuple field b cannot follow default field a"
    ):

        class Bad(base):  # type: ignore[misc]
            a: int = 0
            b: int

    with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):

        class Replaced(base):  # type: ignore[misc]
            a: int

            def _replace(self) -> None: ...
