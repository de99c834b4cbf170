"""retromesh.extras: typed reads of extras; a value of the wrong type or range reads as the
default ("not recorded") and nothing raises."""
from __future__ import annotations

import math

from retromesh import extras as x


def test_integer():
    d = {"a": 3, "b": 3.0, "c": 3.5, "d": True, "e": "3", "f": None, "g": 2**40, "h": math.nan}
    assert [x.integer(d, k, -1) for k in "abcdefgh"] == [3, 3, -1, -1, -1, -1, -1, -1]
    assert x.integer(d, "a", None, 4, 9) is None and x.integer(d, "a", None, 0, 3) == 3
    assert x.integer(d, "missing") is None and x.integer(["a"], 0, 7) == 7


def test_number():
    d = {"a": 2, "b": 2.5, "c": True, "d": "2", "e": math.inf, "f": math.nan, "g": 1e39}
    assert [x.number(d, k, None) for k in "abcdefg"] == [2.0, 2.5, None, None, None, None, 1e39]
    assert x.number(d, "g", 0.0, *x.FLOAT32) == 0.0
    assert isinstance(x.number(d, "a"), float) and x.number(None, "a", 1.0) == 1.0


def test_text():
    assert x.text({"a": "s", "b": 5}, "a") == "s" and x.text({"b": 5}, "b", "") == ""


def test_integers():
    assert x.integers([1, 2.0, 3]) == [1, 2, 3]
    assert x.integers([1, 2], n=3) is None and x.integers((1, 2)) is None
    assert x.integers([1, True]) is None and x.integers([1, 70000], hi=0xFFFF) is None
    assert x.integers([]) == []


def test_numbers():
    assert x.numbers([1, 2.5, -3]) == [1.0, 2.5, -3.0]
    assert x.numbers([1.0, 2.0], n=3) is None and x.numbers("12") is None
    assert x.numbers([1.0, False]) is None and x.numbers([1.0, None]) is None
    assert x.numbers([1.0, math.nan]) is None and x.numbers([1.0, math.inf]) is None
    assert x.numbers([1e39], None, *x.FLOAT32) is None
    assert x.numbers([0.5, 2.0], 2, 0.0, 1.0) is None and x.numbers([], 0) == []
