"""`NamedTuple`: typing's, class syntax and all, without the start-up it costs here.

typing's builds each class by checking every annotation, and under `from __future__
import annotations` an annotation is a string it compiles (`ForwardRef`): about 2 M
instructions a class, where a `-p` start-up defines some forty of them. This one makes
the same class (`collections.namedtuple`, the class body's methods, properties and
docstring on it, the defaults of its last fields) and leaves the annotations as the
strings they are. Type checkers see typing's own.
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from typing import NamedTuple as NamedTuple
else:
    #: What the class body may not define: the tuple's own machinery.
    _PROHIBITED = frozenset(
        {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
         "_make", "_replace", "_asdict", "_source"}
    )  # fmt: skip
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _NamedTupleMeta(type):
        def __new__(cls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
            annotations = ns.get("__annotations__", {})
            fields = tuple(annotations)
            defaults = [ns[name] for name in fields if name in ns]
            for name in fields[len(fields) - len(defaults) :]:
                if name not in ns:
                    given = ", ".join(field for field in fields if field in ns)
                    raise TypeError(f"Non-default namedtuple field {name} cannot follow "
                                    f"default field{'s' if len(defaults) > 1 else ''} {given}")  # fmt: skip
            record = collections.namedtuple(
                typename, fields, defaults=defaults, module=ns["__module__"]
            )
            record.__annotations__ = dict(annotations)
            for key, value in ns.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"Cannot overwrite NamedTuple attribute {key}")
                if key not in _SPECIAL and key not in fields:
                    setattr(record, key, value)
            return record

    NamedTuple = type.__new__(_NamedTupleMeta, "NamedTuple", (), {"__module__": __name__})

__all__ = ["NamedTuple"]
