"""``record``: :func:`dataclasses.dataclass`, cheaper to define.

``dataclass`` writes the source of every method it adds (``__init__``, ``__repr__``,
``__eq__``, a frozen class's ``__hash__``) and compiles it when the class is defined: the
data classes on the way of a conversion would compile about three methods each at every
start of the command.

``record`` has ``dataclass`` write ``__init__`` only (the method that runs once per object)
and gives the class shared ``__repr__``, ``__eq__`` and (frozen) ``__hash__`` that return
what ``dataclass``'s own would: the same text (``'...'`` on recursion), equality over the
same fields (tuples compared, as ``dataclass`` does), the same hash, an unhashable class
where ``dataclass`` makes one. Methods the class body defines are kept, as ``dataclass``
keeps them. :func:`dataclasses.fields`, ``replace``, ``asdict`` and pickling are unchanged.
"""
from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["record"]

T = TypeVar("T", bound=type)
_MISSING = object()


@overload
def record(cls: T, /) -> T: ...
@overload
def record(*, frozen: bool = False) -> Callable[[T], T]: ...


# dataclass_transform: type checkers and IDEs see each record's fields as its constructor
@dataclass_transform()
def record(cls: T | None = None, /, *, frozen: bool = False) -> T | Callable[[T], T]:
    """``@record`` / ``@record(frozen=True)``: ``@dataclass`` / ``@dataclass(frozen=True)``."""
    def wrap(c: T) -> T:
        return _record(c, frozen)
    return wrap if cls is None else wrap(cls)


def _record(cls: T, frozen: bool) -> T:
    own = set(cls.__dict__)
    body_hash = cls.__dict__.get("__hash__", _MISSING)   # dataclass's "explicit hash" test
    explicit_hash = not (body_hash is _MISSING or (body_hash is None and "__eq__" in own))
    # Any: the methods below are assigned onto the class, which a checker rejects on a typed one
    cls_: Any = dataclasses.dataclass(cls, repr=False, eq=False, frozen=frozen)
    fields = dataclasses.fields(cls_)
    if "__repr__" not in own:
        cls_.__repr__ = _repr_of(tuple(f.name for f in fields if f.repr))
    compared = tuple(f.name for f in fields if f.compare)
    if "__eq__" not in own:
        cls_.__eq__ = _eq_of(cls_, compared)
    if not explicit_hash:           # dataclass(eq=True): hashed by value if frozen, else not
        cls_.__hash__ = _hash_of(tuple(f.name for f in fields if (
            f.compare if f.hash is None else f.hash))) if frozen else None
    return cls_


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    def values(obj: Any) -> tuple:
        return tuple([getattr(obj, n) for n in names])
    return values


def _repr_of(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        return f"{type(self).__qualname__}({inner})"
    return __repr__


def _eq_of(cls: type, names: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    values = _values(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented
    __eq__.__qualname__ = f"{cls.__qualname__}.__eq__"
    return __eq__


def _hash_of(names: tuple[str, ...]) -> Callable[[Any], int]:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))
    return __hash__
