"""``retromesh.records.record`` behaves as ``dataclasses.dataclass``: same repr, equality and
hashing, for every field option the package uses; the package's own classes are records."""
from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import field

import numpy as np
from hypothesis import given, strategies as st

from retromesh.formats.b3d.chunks import BrushEntry, NodeChunk
from retromesh.records import record
from retromesh.scene import Node, Scene


def _classes(frozen: bool):
    made = []
    for deco in (dataclasses.dataclass(frozen=frozen), record(frozen=frozen)):
        @deco
        class Item:
            """An item."""
            a: int
            b: object = None
            c: float = field(default=0.0, compare=False)
            d: list = field(default_factory=list, repr=False)
            e: str = field(default="", hash=False)
        made.append(Item)
    return made


values = st.one_of(st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=3),
                   st.none(), st.lists(st.integers(0, 2), max_size=2).map(tuple))


@given(frozen=st.booleans(), x=st.tuples(st.integers(-2, 2), values, st.floats(allow_nan=True),
                                         st.lists(st.integers(), max_size=2), st.text(max_size=2)),
       y=st.tuples(st.integers(-2, 2), values, st.floats(allow_nan=True),
                   st.lists(st.integers(), max_size=2), st.text(max_size=2)))
def test_record_is_dataclass(frozen, x, y):
    D, R = _classes(frozen)
    d1, d2, r1, r2 = D(*x), D(*y), R(*x), R(*y)
    assert repr(r1) == repr(d1).replace(".D", ".R") or repr(r1).split("(", 1)[1] == \
        repr(d1).split("(", 1)[1]
    assert (r1 == r2) == (d1 == d2) and (r1 != r2) == (d1 != d2)
    assert (r1 == r1) == (d1 == d1)                 # identity inside the tuple, as dataclass
    assert (r1 == "x") is False and (r1 == d1) is False
    assert (R.__hash__ is None) == (D.__hash__ is None)
    if D.__hash__ is not None:
        try:
            expected = hash(d1)
        except TypeError:                           # an unhashable field value
            expected = None
        if expected is not None:
            assert hash(r1) == expected
    assert [f.name for f in dataclasses.fields(R)] == [f.name for f in dataclasses.fields(D)]
    assert copy.deepcopy(r1) == r1 or r1 != r1
    if not frozen:
        assert dataclasses.replace(r1, a=9).a == 9


def test_record_keeps_what_the_class_defines_and_guards_recursion():
    @record
    class Own:
        x: int = 0

        def __eq__(self, other):
            return True

        def __repr__(self):
            return "own"
    assert Own(1) == Own(2) and repr(Own()) == "own" and Own.__hash__ is None

    @record
    class Loop:
        items: list = field(default_factory=list)
    loop = Loop()
    loop.items.append(loop)
    assert repr(loop).endswith("Loop(items=[...])")


def test_package_classes_are_records():
    node = Node(name="a", translation=np.zeros(3))
    assert repr(node).startswith("Node(name='a'")
    assert Scene() == Scene() and Scene.__hash__ is None
    assert BrushEntry(b"x", texture_ids=[1]) == BrushEntry(b"x", texture_ids=[1]) != BrushEntry(b"y")
    assert dataclasses.is_dataclass(NodeChunk)
    entry = BrushEntry(b"x", texture_ids=[1])
    assert pickle.loads(pickle.dumps(entry)) == entry    # -j workers send records
