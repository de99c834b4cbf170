"""retromesh.arrays.as_dtype: values that fit convert unchanged, any other is refused by name."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from retromesh.arrays import as_dtype
from retromesh.binio import Writer
from retromesh.errors import DocumentError

INTS = ["i1", "u1", "<i2", "<u2", ">i2", "<i4", "<u4", "<i8", "<u8"]
#: values numpy can hold whatever a field's range: int64 and uint64 arrays, Python ints past them
WIDE = st.integers(-(2 ** 63), 2 ** 64 - 1)


def _fits(v: int, dt: np.dtype) -> bool:
    info = np.iinfo(dt)
    return info.min <= v <= info.max


@given(st.sampled_from(INTS), st.lists(WIDE, max_size=12), st.sampled_from(["<i8", "<u8", "O"]))
def test_integers_convert_unchanged_or_are_refused(target, values, source):
    dt = np.dtype(target)
    if source != "O":
        values = [v for v in values if _fits(v, np.dtype(source))]
    src = np.array(values, dtype=source)
    bad = [i for i, v in enumerate(values) if not _fits(v, dt)]
    if bad:
        with pytest.raises(DocumentError) as exc:
            as_dtype(src, dt, "field")
        i = bad[0]
        assert str(exc.value) == (f"field[{i}]: {values[i]} does not fit {dt.name} "
                                  f"({np.iinfo(dt).min}..{np.iinfo(dt).max})")
    else:
        out = as_dtype(src, dt, "field")
        assert out.dtype == dt and out.shape == src.shape
        assert out.tolist() == values


FLOATS = st.one_of(st.integers(-(2 ** 64), 2 ** 65).map(float), st.floats(-3e19, 3e19),
                   st.sampled_from([np.nan, np.inf, -np.inf, 2.0 ** 63, 2.0 ** 64, -(2.0 ** 63)]))


@given(st.sampled_from(INTS), hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=5),
                                         elements=FLOATS))
def test_floats_into_integers_must_be_whole_and_fit(target, src):
    dt = np.dtype(target)
    info = np.iinfo(dt)
    flat = src.reshape(-1).tolist()
    ok = [np.isfinite(v) and v == np.trunc(v) and info.min <= v < info.max + 1 for v in flat]
    if all(ok):
        out = as_dtype(src, dt, "f")
        assert out.dtype == dt and np.array_equal(out, src)
    else:
        with pytest.raises(DocumentError, match=r"^f\[") as exc:
            as_dtype(src, dt, "f")
        k = ok.index(False)
        idx = "".join(f"[{i}]" for i in np.unravel_index(k, src.shape))
        assert str(exc.value).startswith(f"f{idx}: {flat[k]!r} ")


REC = np.dtype([("id", "<u2"), ("pos", "<f4", (3,)), ("ix", "<i4", (2,)), ("flag", "u1")])
WIDE_REC = np.dtype([("id", "<i8"), ("pos", "<f8", (3,)), ("ix", "<i8", (2,)), ("flag", "<i8")])


@given(st.lists(st.tuples(st.integers(-70000, 70000), st.floats(-1e6, 1e6),
                          st.integers(-(2 ** 33), 2 ** 33), st.integers(-300, 300)),
                max_size=8))
def test_structured_fields_are_checked_by_name(rows):
    src = np.zeros(len(rows), WIDE_REC)
    for r, (a, f, b, c) in enumerate(rows):
        src[r] = (a, (f, f, f), (b, -b), c)
    first = None
    for r, (a, _f, b, c) in enumerate(rows):
        for path, v, dt in ((f"recs[{r}].id", a, "<u2"), (f"recs[{r}].ix[0]", b, "<i4"),
                            (f"recs[{r}].ix[1]", -b, "<i4"), (f"recs[{r}].flag", c, "u1")):
            if not _fits(v, np.dtype(dt)):
                first = first or (path, v)
    if first is None:
        out = as_dtype(src, REC, "recs")
        assert out.dtype == REC
        for name in REC.names:
            assert np.array_equal(out[name], src[name].astype(REC[name].base))
    else:
        # fields are checked one after another, so the message names the first field that
        # fails, at its first record
        with pytest.raises(DocumentError) as exc:
            as_dtype(src, REC, "recs")
        field = str(exc.value).split(":")[0]
        assert field.split("[", 2)[0] == "recs" and " does not fit " in str(exc.value)
        name = field.split(".")[1].split("[")[0]
        col = src[name].reshape(len(rows), -1)
        info = np.iinfo(REC[name].base)
        assert ((col < info.min) | (col > info.max)).any()


def test_examples_of_the_messages():
    with pytest.raises(DocumentError, match=r"^BRUS\.texture_id\[3\]: 4294967297 does not fit "
                                            r"uint32 \(0\.\.4294967295\)$"):
        as_dtype([0, 1, 2, 2 ** 32 + 1], "<u4", "BRUS.texture_id")
    with pytest.raises(DocumentError, match=r"^faces\[1\]\[2\]: 70000 does not fit uint16"):
        as_dtype([[0, 1, 2], [3, 4, 70000]], "<u2", "faces")
    with pytest.raises(DocumentError, match=r"^t\[0\]: nan is not a whole number for int32"):
        as_dtype([np.nan], "<i4", "t")
    with pytest.raises(DocumentError, match=r"^t\[1\]: 1\.5 is not a whole number for int32"):
        as_dtype([1.0, 1.5], "<i4", "t")
    with pytest.raises(DocumentError, match=r"^r: records with fields a, b given for x, y$"):
        as_dtype(np.zeros(1, [("a", "i4"), ("b", "i4")]), [("x", "i4"), ("y", "i4")], "r")
    with pytest.raises(DocumentError, match=r"^ragged: cannot be an array of uint16"):
        as_dtype([[1, 2], [3]], "<u2", "ragged")


def test_no_copy_when_the_dtype_already_matches():
    a = np.arange(5, dtype="<u2")
    assert as_dtype(a, "<u2", "a") is a
    s = np.zeros(3, REC)
    assert as_dtype(s, REC, "s") is s
    # a type whose every value fits is not scanned, and converts exactly
    assert as_dtype(np.arange(-3, 3, dtype="i2"), ">i4", "a").tolist() == [-3, -2, -1, 0, 1, 2]


def test_float_fields_convert_as_numpy_does():
    with np.errstate(over="ignore"):
        out = as_dtype([0.1, 1e300, np.nan], "<f4", "f")
    assert out.dtype == np.dtype("<f4") and np.isinf(out[1]) and np.isnan(out[2])


def test_writer_records_refuses_a_value_its_dtype_cannot_hold():
    w = Writer("<")
    w.u8(0)
    with pytest.raises(DocumentError, match=r"^records at byte 1\[0\]: 70000 does not fit uint16"):
        w.records([70000], "<u2")
    w.records([65535], "<u2")
    assert w.getvalue() == b"\0\xff\xff"
